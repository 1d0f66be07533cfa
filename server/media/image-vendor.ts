// The image vendor behind media generation: one small interface, and an adapter for an
// OpenAI-compatible images API (POST {base}/images/generations, or {base}/images/edits when
// reference images are sent). Nothing is enabled unless MARQUEE_IMAGE_VENDOR_URL is set.
import type { GenerationQuality } from '../../sdk/contract/media';

/** Sizes an OpenAI-compatible image model renders; the server crops to the exact aspect after. */
export type VendorSize = '1024x1024' | '1536x1024' | '1024x1536';

export interface ReferenceImage {
  bytes: Buffer;
  contentType: string;
  filename: string;
}

export interface ImageRequest {
  /** Already framed: the caller's prompt plus the server's fixed requirements. */
  prompt: string;
  size: VendorSize;
  quality: GenerationQuality;
  references: ReferenceImage[];
}

export interface ImageVendor {
  /** The rendered image's bytes (any format sharp reads). */
  generate(request: ImageRequest, signal: AbortSignal): Promise<Buffer>;
}

/** The vendor refused this request (content policy, bad prompt): the caller's to change. */
export class VendorRefusedError extends Error {}
/** The vendor failed or answered nonsense: retry later. */
export class VendorUnavailableError extends Error {}

/** gpt-image-class renders can take a minute or two at high quality. */
export const VENDOR_TIMEOUT_MS = 180_000;
/** A base64 image answer larger than this is not an image we asked for. */
const VENDOR_ANSWER_MAX_BYTES = 64 * 1024 * 1024;

/** The vendor MARQUEE_IMAGE_VENDOR_URL names (default-services.ts builds it once per server). */
export function openAiCompatibleVendor(options: { url: string; key?: string; model: string }): ImageVendor {
  const base = options.url.replace(/\/+$/, '');
  const authorization: Record<string, string> = options.key ? { authorization: `Bearer ${options.key}` } : {};
  return {
    async generate(request, signal) {
      let response: Response;
      try {
        if (request.references.length === 0) {
          response = await fetch(`${base}/images/generations`, {
            method: 'POST',
            headers: { ...authorization, 'content-type': 'application/json' },
            body: JSON.stringify({
              model: options.model,
              prompt: request.prompt,
              n: 1,
              size: request.size,
              quality: request.quality,
            }),
            signal,
          });
        } else {
          const form = new FormData();
          form.set('model', options.model);
          form.set('prompt', request.prompt);
          form.set('n', '1');
          form.set('size', request.size);
          form.set('quality', request.quality);
          for (const ref of request.references)
            form.append('image[]', new Blob([new Uint8Array(ref.bytes)], { type: ref.contentType }), ref.filename);
          response = await fetch(`${base}/images/edits`, {
            method: 'POST',
            headers: authorization,
            body: form,
            signal,
          });
        }
      } catch {
        throw new VendorUnavailableError('the image vendor could not be reached');
      }
      if (response.status === 400 || response.status === 422) {
        await response.body?.cancel();
        throw new VendorRefusedError('the image vendor refused this prompt');
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new VendorUnavailableError(`the image vendor answered ${response.status}`);
      }
      const text = await boundedText(response);
      let b64: unknown;
      try {
        b64 = (JSON.parse(text) as { data?: { b64_json?: unknown }[] }).data?.[0]?.b64_json;
      } catch {
        b64 = undefined;
      }
      if (typeof b64 !== 'string' || b64.length === 0)
        throw new VendorUnavailableError('the image vendor answered without an image');
      return Buffer.from(b64, 'base64');
    },
  };
}

async function boundedText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > VENDOR_ANSWER_MAX_BYTES) {
      await reader.cancel();
      throw new VendorUnavailableError('the image vendor answer is too large');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
