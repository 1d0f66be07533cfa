// Comments: an agent's own notes on a screen, a playlist or a playlist page (`--page`). The server
// keeps them as given (a JSON object of at most 1024 bytes) and never reads them.
import fs from 'node:fs/promises';
import type { CommentTarget, Comments } from '../../contract/comments';
import { command, type CommandContext } from '../command';
import { invalidInput, usage } from '../exit-codes';
import { lines } from '../output';

const targetArguments = ['<screen|playlist>', '<id>'];
const pageOption = { flags: '--page <page_id>', description: "a playlist page's comments instead of the playlist's" };

function targetOf(ctx: CommandContext): CommentTarget {
  const [kind, id] = ctx.args as [string, string];
  const page = ctx.options.page as string | undefined;
  if (kind !== 'screen' && kind !== 'playlist') throw usage(`comments are on a screen or a playlist, not "${kind}"`);
  if (page !== undefined && kind !== 'playlist') throw usage('--page names a page of a playlist');
  return page !== undefined ? { kind: 'page', id, pageId: page } : { kind, id };
}

async function commentsOf(ctx: CommandContext): Promise<Record<string, unknown>> {
  const inline = ctx.args[2] as string | undefined;
  const file = ctx.options.file as string | undefined;
  if ((inline === undefined) === (file === undefined))
    throw usage('give the comments as a JSON argument or --file <file>, one of them');
  let text = inline;
  if (file !== undefined) {
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      throw invalidInput(`${file}: cannot read it (${(error as Error).message})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text!);
  } catch (error) {
    throw invalidInput(`the comments are not JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidInput('the comments must be a JSON object');
  return value as Record<string, unknown>;
}

// One line each: a value shown whole would have its line breaks escaped as \u000a.
const human = (c: Comments) => [
  lines(...(c.comments === null ? ['no comments'] : JSON.stringify(c.comments, null, 2).split('\n'))),
];

export const commentCommands = [
  command({
    name: 'comment show',
    summary: "show the comments on a screen, a playlist or (--page) a playlist's page",
    arguments: targetArguments,
    options: [pageOption],
    async run(ctx): Promise<Comments> {
      return (await (await ctx.client()).comments.get(targetOf(ctx))).data;
    },
    human,
  }),
  command({
    name: 'comment set',
    summary: 'replace the comments with a JSON object (at most 1024 bytes)',
    description: 'e.g. marquee comment set screen scr_… \'{"owner":"facilities"}\'',
    arguments: [...targetArguments, '[comments]'],
    options: [pageOption, { flags: '--file <file>', description: 'read the comments from this JSON file' }],
    idempotencyKeyOption: true,
    async run(ctx): Promise<Comments> {
      const target = targetOf(ctx);
      return (await (await ctx.client()).comments.set(target, await commentsOf(ctx), ctx.call())).data;
    },
    human,
  }),
  command({
    name: 'comment delete',
    summary: 'remove the comments (no error when there are none)',
    arguments: targetArguments,
    options: [pageOption],
    idempotencyKeyOption: true,
    async run(ctx) {
      await (await ctx.client()).comments.remove(targetOf(ctx), ctx.call());
      return { comments: null };
    },
    human: () => [lines('comments removed')],
  }),
];
