// Where an S3-compatible blob store lives, parsed from MARQUEE_BLOB_URL. Kept apart from the store so
// configuration checks the URL without loading the AWS SDK.
import { assertBlobKey } from './blob-store';

export interface S3Location {
  bucket: string;
  /** Key prefix without slashes at either end; empty for the bucket's root. */
  prefix: string;
  endpoint?: string;
  region?: string;
  forcePathStyle: boolean;
}

/**
 * `s3://bucket[/prefix][?endpoint=https://host:port&region=eu-west-1&force_path_style=true]`.
 * Credentials are never part of the URL: the SDK's standard chain (AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, a profile, an instance role) supplies them.
 */
export function parseS3BlobUrl(url: string): S3Location {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/[^?#]*)?(\?[^#]*)?$/.exec(url);
  if (!match) throw new Error('must be s3://bucket[/prefix][?endpoint=…&region=…&force_path_style=true]');
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix !== '') assertBlobKey(prefix);
  const query = new URLSearchParams(match[3] ?? '');
  const known = new Set(['endpoint', 'region', 'force_path_style']);
  for (const name of query.keys()) {
    if (!known.has(name)) throw new Error(`unknown parameter ${name}; known: ${[...known].join(', ')}`);
  }
  const endpoint = query.get('endpoint') ?? undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/?#\s]+\/?$/.test(endpoint)) {
    throw new Error('endpoint must be an origin such as http://127.0.0.1:9000');
  }
  const pathStyle = query.get('force_path_style') ?? 'false';
  if (!['true', 'false', '1', '0'].includes(pathStyle)) throw new Error('force_path_style must be true or false');
  return {
    bucket: match[1]!,
    prefix,
    endpoint: endpoint?.replace(/\/$/, ''),
    region: query.get('region') ?? undefined,
    forcePathStyle: pathStyle === 'true' || pathStyle === '1',
  };
}
