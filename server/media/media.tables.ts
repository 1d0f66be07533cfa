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

export interface MediaTables {
  media: MediaTable;
}
