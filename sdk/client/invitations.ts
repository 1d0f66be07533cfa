// Invitations of people into the project (project members, ad buyers), by email or by link, and
// their revocation.
import type { InvitationCreate, InvitationCreated, InvitationList, InvitationListQuery } from '../contract/people';
import type { CallOptions, ClientTransport } from './transport';

export function invitationRoutes(t: ClientTransport) {
  return {
    /** Newest first, one page; pass `next_cursor` back as `cursor` for the next. */
    list: (query: Partial<InvitationListQuery> = {}) =>
      t.request<InvitationList>({ method: 'GET', path: '/api/v1/invitations', query: { ...query } }),
    /**
     * Invites by email (one invitation per address; an outstanding one of the same kind and address
     * is sent again) or makes one link invitation, whose `link_url` is shown once.
     */
    create: (body: InvitationCreate, options: CallOptions = {}) =>
      t.request<InvitationCreated>({
        method: 'POST',
        path: '/api/v1/invitations',
        json: body,
        idempotent: true,
        cache: 'no-store',
        ...options,
      }),
    /** Revokes an outstanding invitation; an accepted one is 409 invitation_consumed. */
    revoke: (id: string, options: CallOptions = {}) =>
      t.request<void>({
        method: 'POST',
        path: `/api/v1/invitations/${encodeURIComponent(id)}/revoke`,
        idempotent: true,
        ...options,
      }),
  };
}
