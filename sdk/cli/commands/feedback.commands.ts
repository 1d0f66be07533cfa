// Feedback to the people who run this installation: a bug report or a feature request, sent with
// this CLI's version and platform; and what this project has sent, newest first.
import os from 'node:os';
import { FEEDBACK_KINDS, type Feedback, type FeedbackKind } from '../../contract/feedback';
import { command } from '../command';
import { usage } from '../exit-codes';
import { fields, table } from '../output';
import { CLI_VERSION } from '../version';

export const feedbackCommands = [
  command({
    name: 'feedback send',
    summary: 'send a bug report or a feature request to the operators of this server',
    arguments: ['<bug|feature>', '<title>'],
    options: [{ flags: '--body <text>', description: 'what happened, or what you would like (1 to 4000 characters)' }],
    idempotencyKeyOption: true,
    async run(ctx): Promise<Feedback> {
      const [kind, title] = ctx.args as [string, string];
      if (!(FEEDBACK_KINDS as readonly string[]).includes(kind))
        throw usage(`feedback is a bug or a feature, not "${kind}"`);
      const body = ctx.options.body as string | undefined;
      if (body === undefined) throw usage('give --body <text>: what happened, or what you would like');
      const context = { cli_version: CLI_VERSION, platform: `${os.platform()}/${os.arch()}` };
      return (await (await ctx.client()).feedback.send(kind as FeedbackKind, { title, body, context }, ctx.call()))
        .data;
    },
    human: (f) => [fields(['id', f.id], ['kind', f.kind], ['title', f.title], ['sent', f.created_at])],
    ids: (f) => [f.id],
  }),
  command({
    name: 'feedback list',
    summary: 'what this project has sent: bug reports and feature requests, newest first',
    async run(ctx) {
      const client = await ctx.client();
      const [bugs, features] = await Promise.all([client.feedback.list('bug'), client.feedback.list('feature')]);
      const items = [...bugs.data.items, ...features.data.items].sort((a, b) =>
        b.created_at.localeCompare(a.created_at),
      );
      return { items };
    },
    human: (list: { items: Feedback[] }) => [
      table(
        ['sent', 'kind', 'title'],
        list.items.map((f) => [f.created_at, f.kind, f.title]),
        'nothing sent yet',
      ),
    ],
  }),
];
