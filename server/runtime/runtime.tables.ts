/**
 * One minted manifest: what a screen's player must show at one manifest revision. Immutable once
 * written; grants, the content-access generation and placement capabilities are added when served.
 */
export interface RuntimeManifestTable {
  screen_id: string;
  /** The screen's integer manifest_revision this document belongs to. */
  manifest_revision: number;
  tenant_id: string;
  /** JSON StoredManifest (manifests/manifest-compose.ts). */
  document: string;
  /** 1 when an application placement needs placement capabilities. */
  has_capabilities: number;
  created_at: number;
  /** When a newer revision of the screen was minted; null while this one is the newest. */
  superseded_at: number | null;
}

export type ManifestContentKind = 'media' | 'release' | 'application';

/** What a minted manifest refers to: protected routes check membership here. */
export interface RuntimeManifestContentTable {
  screen_id: string;
  manifest_revision: number;
  tenant_id: string;
  kind: ManifestContentKind;
  ref: string;
}

/** Per screen: the manifest revision its paired player reported on glass (the "active grant"). */
export interface ScreenRuntimeStateTable {
  screen_id: string;
  tenant_id: string;
  active_manifest_revision: number;
  activated_at: number;
  /** The playlist of that manifest (null: it had none, nothing was assigned). */
  playlist_id: string | null;
}

/** The normalized webapp package of a release: a deterministic tar.gz, built once and kept as a blob. */
export interface ReleasePackageTable {
  release_id: string;
  tenant_id: string;
  blob_key: string;
  bytes: number;
  sha256: string;
  created_at: number;
}

export interface RuntimeTables {
  runtime_manifests: RuntimeManifestTable;
  runtime_manifest_content: RuntimeManifestContentTable;
  screen_runtime_state: ScreenRuntimeStateTable;
  release_packages: ReleasePackageTable;
}
