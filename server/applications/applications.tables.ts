export interface ApplicationTable {
  id: string;
  tenant_id: string;
  name: string;
  revision: number;
  state: 'active' | 'deleted';
  /** The newest release that reached `ready`, if any. */
  latest_ready_release_id: string | null;
  created_at: number;
  updated_at: number;
  /** Tombstone time; deleted applications answer not_found. */
  deleted_at: number | null;
}

export interface ReleaseTable {
  /** `rel_…`, immutable. */
  id: string;
  tenant_id: string;
  application_id: string;
  state: 'pending' | 'ready' | 'failed' | 'deleted';
  /** 40 lowercase hex: the release host label, a domain-separated digest of the release id. */
  host_label: string;
  operation_id: string;
  sdk_version: string | null;
  archive_sha256: string;
  expanded_bytes: number;
  file_count: number;
  /** Entry document inside the release root. */
  entry: string;
  /** The application's revision when this release was accepted: orders releases newest first. */
  accepted_revision: number;
  created_at: number;
  published_at: number | null;
  deleted_at: number | null;
}

/**
 * One regular file of a release: its normalized (NFC) archive path and the ordinal under which
 * its bytes are stored (`releases/<release id>/<ordinal>`). Archive paths never become storage
 * keys, so no uploaded name can reach the file system.
 */
export interface ReleaseFileTable {
  release_id: string;
  path: string;
  ordinal: number;
  bytes: number;
}

export interface ApplicationTables {
  applications: ApplicationTable;
  releases: ReleaseTable;
  release_files: ReleaseFileTable;
}
