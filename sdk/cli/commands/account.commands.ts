// The credential's own account surface: what the server sees it as, a dashboard sign-in link for
// the person beside the agent, and revoking this credential for good.
import type { DashboardLink } from '../../contract/people';
import type { ProjectAccount } from '../../contract/tenants';
import { command } from '../command';
import { usage } from '../exit-codes';
import { fields, formatBytes, lines } from '../output';

/** `account show`, and `auth status` (the reference client's name for it) the same. */
const showAccount = command({
  name: 'account show',
  summary: 'show the project this credential acts for, as GET /api/v1/account reads it',
  async run(ctx): Promise<ProjectAccount> {
    return (await (await ctx.client()).account.get<ProjectAccount>()).data;
  },
  human: (a) => [
    fields(
      ['id', a.id],
      ['name', a.name],
      ['status', a.status],
      ['plan', a.plan],
      ['email', a.email],
      ['screens', `${a.screen_count} of ${a.screen_limit}`],
      ['storage', `${formatBytes(a.used_bytes)} used of ${formatBytes(a.content_limit_bytes)}`],
      ['credits', a.credit_remaining],
    ),
  ],
  ids: (a) => [a.id],
});

export const accountCommands = [
  showAccount,
  {
    ...showAccount,
    name: 'auth status',
    summary: 'the same as account show: the project this credential acts for',
  },
  command({
    name: 'dashboard',
    summary: 'make a single-use, ten-minute sign-in link to the dashboard for a person',
    description:
      'The link is a credential: hand it only to the person who will open it. Opening it lets them join this project\n(signing in, or proving an email address and making a login).',
    idempotencyKeyOption: true,
    async run(ctx): Promise<DashboardLink> {
      return (await (await ctx.client()).account.dashboardLink(ctx.call())).data;
    },
    human: (link) => [lines(link.url, `single use; expires ${link.expires_at}`)],
    // The link is the essential value: with -q it is all that is printed, never nothing (it would be
    // made, counted against the hourly budget, and lost).
    ids: (link) => [link.url],
  }),
  command({
    name: 'auth revoke',
    summary: "revoke this CLI's credential on the server for good (no replacement is issued)",
    description:
      'The project, its screens and content stay. The credential is removed from the config file; the next command enrolls anew.',
    options: [{ flags: '--yes', description: 'confirm: the credential cannot be recovered' }],
    async run(ctx) {
      if (ctx.options.yes !== true) throw usage('revoking the credential cannot be undone; add --yes to confirm');
      await (await ctx.client()).account.revokeCredential(ctx.call());
      await ctx.config.update((c) => {
        delete c.servers[ctx.apiUrl];
      });
      return { revoked: true };
    },
    human: () => [lines('credential revoked and removed from the config file')],
  }),
];
