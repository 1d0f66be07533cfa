// The upload's signed PUT, sent exactly as issued (URL, method, headers) by XMLHttpRequest: fetch
// cannot report upload progress in browsers over HTTP/1.1, XHR can. No cookie goes with it.
import type { MediaUploadSession } from '../../../sdk/contract/media';

/** Headers the browser sets itself (and refuses from script). */
const BROWSER_OWNED = new Set(['content-length', 'host']);

export function putSigned(
  session: Pick<MediaUploadSession, 'upload_url' | 'method' | 'headers'>,
  body: Blob,
  onProgress: (sent: number, total: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(session.method, session.upload_url);
    xhr.withCredentials = false;
    for (const [name, value] of Object.entries(session.headers))
      if (!BROWSER_OWNED.has(name.toLowerCase())) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : body.size);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve();
      else reject(new Error(uploadRefusal(xhr.status, xhr.responseText)));
    };
    xhr.onerror = () => reject(new Error('the upload did not reach the server'));
    xhr.onabort = () => reject(new DOMException('the upload was cancelled', 'AbortError'));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(body);
  });
}

/** The problem's detail from a refused PUT, else its status. */
export function uploadRefusal(status: number, text: string): string {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    if (typeof detail === 'string' && detail) return detail;
  } catch {
    // not a problem document
  }
  return `the storage refused the upload (${status})`;
}
