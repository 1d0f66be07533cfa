// The contact-address rule: the address an agent gave at enrollment is unverified and grants
// nothing by itself (spec Authentication rule 4), but its mailbox may ask to join the projects
// enrolled with it that nobody has joined yet. A sign-in reset request for the address reissues a
// member invitation (an outstanding one is reused) for at most ten such projects, the most recent.
import type { Work } from '../store/store';
import { issueEmailInvitation } from './invitations';
import type { InvitationTable } from './invitations.tables';

/** spec Limits: contact-address enrollment reissue for at most ten recent projects with zero members. */
export const CONTACT_REISSUE_MAX_PROJECTS = 10;

export interface ReissuedInvitation {
  row: InvitationTable;
  token: string;
  reused: boolean;
  projectName: string;
}

export async function reissueForContactAddress(work: Work, email: string, now: number): Promise<ReissuedInvitation[]> {
  const projects = await work.db
    .selectFrom('tenants')
    .select(['id', 'name'])
    .where('generation', '=', 'P')
    .where('status', '=', 'active')
    .where('email', '=', email)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb.selectFrom('memberships').select('person_id').whereRef('memberships.tenant_id', '=', 'tenants.id'),
        ),
      ),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(CONTACT_REISSUE_MAX_PROJECTS)
    .execute();
  const issued: ReissuedInvitation[] = [];
  for (const project of projects) {
    const invitation = await issueEmailInvitation(
      work,
      { tenantId: project.id, kind: 'project_member', email, advertising: null },
      now,
    );
    issued.push({ ...invitation, projectName: project.name });
  }
  return issued;
}
