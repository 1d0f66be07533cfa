export type MediaKind = 'image' | 'video' | 'audio';

export interface MediaTable {
  /** `med_…` */
  id: string;
  tenant_id: string;
  /** pending: declared, bytes not verified yet; ready: verified and published immutably. */
  state: 'pending' | 'ready' | 'failed' | 'deleted';
  kind: MediaKind;
  filename: string;
  source_filename: string | null;
  content_type: string;
  bytes: number;
  sha256: string;
  tag: string | null;
  /** Verified pixel size (images, video). */
  width: number | null;
  height: number | null;
  /** Verified duration (video, audio) where a library could read it. */
  duration_ms: number | null;
  codecs: string | null;
  revision: number;
  operation_id: string;
  /** Key of the published object in the BlobStore, set once ready. */
  blob_key: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

/**
 * One declared upload: its signed PUT, its reservation and its `media.upload` operation.
 * declared → committed (commit accepted) → ready; or failed / cancelled / expired, which release
 * the reservation exactly once.
 */
export type MediaUploadState = 'declared' | 'committed' | 'ready' | 'failed' | 'cancelled' | 'expired';

export interface MediaUploadTable {
  /** `upl_…` */
  id: string;
  tenant_id: string;
  media_id: string;
  operation_id: string;
  /** Where the signed PUT writes; becomes the media's blob key once verified. */
  object_key: string;
  state: MediaUploadState;
  reserved_bytes: number;
  /** The signed PUT must start before this instant. */
  url_expires_at: number;
  /** An upload not committed by then expires and releases its reservation. */
  commit_by: number;
  created_at: number;
  updated_at: number;
}

/** One generation request; the prompt is kept here unchanged and never returned. */
export interface MediaGenerationTable {
  /** `gen_…` */
  id: string;
  tenant_id: string;
  state: 'running' | 'succeeded' | 'failed';
  media_id: string | null;
  prompt: string;
  aspect_ratio: string;
  quality: string;
  tag: string | null;
  /** JSON array of reference media ids. */
  references: string;
  credits: number | null;
  usd: string | null;
  /** A running generation older than this no longer holds the project's one in-flight slot (crash). */
  lease_expires_at: number;
  request_id: string | null;
  created_at: number;
  updated_at: number;
}

/** Completed response bytes per tenant, UTC day and kind (`project_media_export`, later runtime delivery). */
export interface EgressLedgerTable {
  tenant_id: string;
  day: string;
  kind: string;
  bytes: number;
  count: number;
}

export interface MediaTables {
  media: MediaTable;
  media_uploads: MediaUploadTable;
  media_generations: MediaGenerationTable;
  egress_ledger: EgressLedgerTable;
}
