// Signed, expiring authorization for one PUT of exact bytes to one object key. The local blob store
// serves such URLs itself (see media-upload.routes.ts); an S3-compatible store hands out presigned
// PUT URLs instead, behind the same BlobStore.presignPut.
import type { Keys } from '../keys';
import { assertBlobKey, type PutGrant, type PutVerdict, type SignedPut } from './blob-store';

/** Path prefix of signed PUT URLs served by the local store on the control origin. */
export const SIGNED_PUT_PREFIX = '/private-storage/';

export class PutSigner {
  constructor(
    private readonly keys: Keys,
    private readonly origin: string,
  ) {}

  sign(grant: PutGrant): SignedPut {
    assertBlobKey(grant.key);
    const query = new URLSearchParams({
      bytes: String(grant.bytes),
      content_type: grant.contentType,
      expires: String(grant.expiresAt),
      signature: this.keys.sign('upload-url', signedText(grant)),
    });
    return {
      url: `${this.origin}${SIGNED_PUT_PREFIX}${grant.key}?${query}`,
      method: 'PUT',
      headers: { 'Content-Type': grant.contentType, 'Content-Length': String(grant.bytes) },
      expiresAt: grant.expiresAt,
    };
  }

  /** Checks the signature over key, length, content type and expiry, then the expiry itself. */
  verify(key: string, query: URLSearchParams, now: number): PutVerdict {
    const bytes = query.get('bytes');
    const contentType = query.get('content_type');
    const expires = query.get('expires');
    const signature = query.get('signature');
    if (
      !bytes ||
      !contentType ||
      !expires ||
      !signature ||
      !/^[1-9][0-9]{0,15}$/.test(bytes) ||
      !/^[1-9][0-9]{0,15}$/.test(expires)
    ) {
      return { ok: false, reason: 'malformed' };
    }
    const grant: PutGrant = { key, bytes: Number(bytes), contentType, expiresAt: Number(expires) };
    if (!this.keys.verify('upload-url', signedText(grant), signature)) return { ok: false, reason: 'signature' };
    if (now >= grant.expiresAt) return { ok: false, reason: 'expired' };
    return { ok: true, grant };
  }
}

function signedText(grant: PutGrant): string {
  return ['PUT', grant.key, grant.bytes, grant.contentType, grant.expiresAt].join('\n');
}
