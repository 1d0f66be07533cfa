// The dashboard's upload declaration: the twin of POST /api/v1/media/uploads whose signed PUT, when
// it is the local blob store's door on the control origin, is handed out on the dashboard origin
// instead (the same path and signature; the door is mounted on both). The browser then uploads
// same-origin, with no CORS on the control plane. An S3-compatible store's URL is left as issued:
// its bucket's CORS rule must allow the dashboard origin (docs/operations.md), and the pages' CSP
// names the bucket's origin (dashboardHeaders).
import type { MediaUploadSession } from '../../sdk/contract/media';
import { SIGNED_PUT_PREFIX } from '../blobs/signed-put';
import type { RouteHandler } from '../http/route';
import { declareMediaUpload } from '../media/media-upload.routes';
import { onDashboard } from './dashboard-twin';

/** The upload URL a dashboard page can PUT to from its own origin. */
export function sameOriginUploadUrl(url: string, origins: { control: string; dashboard: string }): string {
  const door = `${origins.control}${SIGNED_PUT_PREFIX}`;
  return url.startsWith(door) ? `${origins.dashboard}${url.slice(origins.control.length)}` : url;
}

function declareOnDashboard(): RouteHandler {
  const twin = onDashboard(declareMediaUpload);
  const { handler } = twin;
  if (handler.kind !== 'mutation') throw new Error('the upload declaration is a mutation');
  return {
    policy: twin.policy,
    handler: {
      kind: 'mutation',
      // Rewritten inside the transaction, so an exact retry replays the same same-origin URL.
      run: async (ctx, work) => {
        const answer = await handler.run(ctx, work);
        const session = answer.body as MediaUploadSession;
        const { controlOrigin, dashboardOrigin } = ctx.services.config;
        const upload_url = sameOriginUploadUrl(session.upload_url, {
          control: controlOrigin,
          dashboard: dashboardOrigin,
        });
        return { ...answer, body: { ...session, upload_url } };
      },
    },
  };
}

export const declareDashboardUpload = declareOnDashboard();
