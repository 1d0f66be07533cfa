// Invitations of people into the project: by email (one per address; an outstanding one of the
// same kind and address is sent again) or one link to hand over, list, revoke. How a person joins
// is in the README ("How a person joins a project").
import type { Invitation, InvitationCreate, InvitationCreated, InvitationList } from '../../contract/people';
import { throughLastPage } from '../all-pages';
import { command } from '../command';
import { usage } from '../exit-codes';
import { lines, table, type Block, type Value } from '../output';

// Literal lists here, not the contract's constants: those modules bring schemas, and the CLI
// loads none on its common path.
const KINDS = ['project_member', 'ad_buyer'] as const;
const STATES = ['outstanding', 'accepted', 'revoked', 'expired'] as const;

function invitationRows(items: (Invitation & { reused?: boolean })[]): Value[][] {
  return items.map((i) => [i.id, i.kind, i.delivery, i.email ?? '(link)', i.status, i.expires_at]);
}

function createdBlocks(created: InvitationCreated): Block[] {
  // The server mails no member of the project (accepting would be refused) and names them.
  const members = (created.already_members ?? []).map((email) => `${email} is already a member: not invited again`);
  return [
    ...(created.items.length > 0 || members.length === 0
      ? [
          table(
            ['id', 'kind', 'delivery', 'email', 'status', 'expires', 'sent again'],
            created.items.map((i) => [...invitationRows([i])[0]!, i.reused]),
          ),
        ]
      : []),
    ...(members.length > 0 ? [lines(...members)] : []),
    ...(created.link_url ? [lines('Hand this link to the person (shown once):', created.link_url)] : []),
  ];
}

export const invitationCommands = [
  command({
    name: 'invitation create',
    summary: 'invite people into the project by email, or make one invitation link',
    description:
      'Email invitations are valid seven days, a link 24 hours. The link is shown once: it is a credential, hand it only to the person it is for.\nAn ad_buyer invitation needs its scope: --screen and/or --slot.',
    arguments: ['[emails...]'],
    options: [
      { flags: '--link', description: 'make a link instead of mailing addresses' },
      {
        flags: '--kind <kind>',
        description: 'what the person becomes (default project_member)',
        choices: KINDS,
      },
      { flags: '--screen <screen-id>', description: 'ad_buyer scope: a screen (repeatable)', repeatable: true },
      { flags: '--slot <slot-id>', description: 'ad_buyer scope: an ad slot (repeatable)', repeatable: true },
    ],
    idempotencyKeyOption: true,
    async run(ctx): Promise<InvitationCreated> {
      const emails = (ctx.args[0] as string[] | undefined) ?? [];
      const link = ctx.options.link === true;
      if (link === emails.length > 0) throw usage('name the addresses to invite, or give --link (not both)');
      const kind = (ctx.options.kind as InvitationCreate['kind'] | undefined) ?? 'project_member';
      const screens = ctx.options.screen as string[] | undefined;
      const slots = ctx.options.slot as string[] | undefined;
      const scoped = screens !== undefined || slots !== undefined;
      if (kind === 'ad_buyer' && !scoped) throw usage('an ad_buyer invitation needs --screen or --slot');
      if (kind !== 'ad_buyer' && scoped) throw usage('--screen and --slot are for --kind ad_buyer only');
      const client = await ctx.client();
      const body: InvitationCreate = link ? { kind, delivery: 'link' } : { kind, delivery: 'email', emails };
      if (scoped) body.advertising = { ...(screens && { screens }), ...(slots && { slots }) };
      return (await client.invitations.create(body, ctx.call())).data;
    },
    human: createdBlocks,
    // A link is shown once: with -q it is what is printed (its id is in `invitation list`).
    ids: (created) => (created.link_url ? [created.link_url] : created.items.map((i) => i.id)),
  }),
  command({
    name: 'invitation list',
    summary: "list the project's invitations, newest first",
    options: [
      { flags: '--kind <kind>', description: 'only this kind', choices: KINDS },
      { flags: '--status <status>', description: 'only this status', choices: STATES },
      { flags: '--cursor <cursor>', description: 'the next_cursor of the previous page' },
      { flags: '--all', description: 'follow next_cursor to the last page' },
    ],
    async run(ctx): Promise<InvitationList> {
      const client = await ctx.client();
      const query = {
        kind: ctx.options.kind as (typeof KINDS)[number] | undefined,
        status: ctx.options.status as (typeof STATES)[number] | undefined,
      };
      const page = async (cursor: string | undefined) => (await client.invitations.list({ ...query, cursor })).data;
      const cursor = ctx.options.cursor as string | undefined;
      return ctx.options.all ? throughLastPage(page, cursor) : page(cursor);
    },
    human: (list) => [
      table(['id', 'kind', 'delivery', 'email', 'status', 'expires'], invitationRows(list.items), 'no invitations'),
      ...(list.next_cursor ? [lines(`more: --cursor ${list.next_cursor}`)] : []),
    ],
    ids: (list) => list.items.map((i) => i.id),
  }),
  command({
    name: 'invitation revoke',
    summary: 'revoke an outstanding invitation (its link or mail stops working)',
    arguments: ['<invitation-id>'],
    idempotencyKeyOption: true,
    async run(ctx) {
      const id = ctx.args[0] as string;
      await (await ctx.client()).invitations.revoke(id, ctx.call());
      return { id, status: 'revoked' as const };
    },
    human: (data) => [lines(`revoked ${data.id}`)],
    ids: (data) => [data.id],
  }),
];
