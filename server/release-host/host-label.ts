// Release host labels: the spec's 160-bit, domain-separated digest of the immutable release id.
import crypto from 'node:crypto';
import type { Config } from '../config';

/** Domain separation: no other SHA-256 in Marquee hashes input that starts with this string. */
const LABEL_DOMAIN = 'marquee.release-host-label.v1\u0000';
/** 160 bits as lowercase hex (spec: 40 characters). */
export const HOST_LABEL_PATTERN = /^[0-9a-f]{40}$/;

export function releaseHostLabel(releaseId: string): string {
  return crypto.createHash('sha256').update(LABEL_DOMAIN).update(releaseId, 'utf8').digest('hex').slice(0, 40);
}

/** The release's own origin, e.g. `http://<label>.release.localhost:8080`. */
export function releaseOriginOf(config: Pick<Config, 'releaseOrigin'>, label: string): string {
  return config.releaseOrigin.replace('{label}', label);
}
