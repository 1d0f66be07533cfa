// An application's key/value storage from the owner's side. Writes carry the revision they expect:
// without --if-match `kv set` only creates (an existing key answers 412 with its current revision),
// and `kv delete` needs the revision it deletes.
import fs from 'node:fs/promises';
import type { KVEntry, KVList } from '../../contract/kv';
import { throughLastPage } from '../all-pages';
import { command } from '../command';
import { invalidInput, usage } from '../exit-codes';
import { fields, formatBytes, lines, table } from '../output';

/** Content types whose value `kv get` prints as text. */
const TEXT_TYPE = /^(text\/|application\/(json|xml|javascript)\b)/i;

function decodedText(entry: KVEntry): string | undefined {
  if (!TEXT_TYPE.test(entry.content_type)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(entry.value_base64, 'base64'));
  } catch {
    return undefined;
  }
}

export const kvCommands = [
  command({
    name: 'kv list',
    summary: "list an application's keys (no values), a page at a time",
    arguments: ['<application-id>'],
    options: [
      { flags: '--cursor <cursor>', description: 'the next_cursor of the previous page' },
      { flags: '--all', description: 'follow next_cursor to the last page' },
    ],
    async run(ctx): Promise<KVList> {
      const client = await ctx.client();
      const app = ctx.args[0] as string;
      const page = async (cursor: string | undefined) => (await client.kv.list(app, { cursor })).data;
      const cursor = ctx.options.cursor as string | undefined;
      return ctx.options.all ? throughLastPage(page, cursor) : page(cursor);
    },
    human: (list) => [
      table(
        ['key', 'revision', 'size', 'content type'],
        list.items.map((e) => [e.key, e.revision, formatBytes(e.bytes), e.content_type]),
        'no keys',
      ),
      ...(list.next_cursor ? [lines(`more: --cursor ${list.next_cursor}`)] : []),
    ],
    ids: (list) => list.items.map((e) => e.key),
  }),
  command({
    name: 'kv get',
    summary: 'read one entry (text values are printed; -o writes the bytes to a file)',
    arguments: ['<application-id>', '<key>'],
    options: [{ flags: '-o, --output <file>', description: 'write the value to this file' }],
    async run(ctx) {
      const entry = (await (await ctx.client()).kv.get(ctx.args[0] as string, ctx.args[1] as string)).data;
      const output = ctx.options.output as string | undefined;
      if (output) await fs.writeFile(output, Buffer.from(entry.value_base64, 'base64'));
      return entry;
    },
    human: (entry) => {
      const text = decodedText(entry);
      return [
        fields(
          ['key', entry.key],
          ['revision', entry.revision],
          ['content type', entry.content_type],
          ['size', formatBytes(entry.bytes)],
          ['value', text ?? `(${entry.bytes} bytes; use -o <file> or --json)`],
        ),
      ];
    },
    ids: (entry) => [entry.key],
  }),
  command({
    name: 'kv set',
    summary: 'write an entry: creates it, or with --if-match <revision> updates it',
    arguments: ['<application-id>', '<key>', '[value]'],
    options: [
      { flags: '--file <file>', description: 'take the value from this file (bytes as they are)' },
      {
        flags: '--content-type <type>',
        description: 'default text/plain; charset=utf-8, or application/octet-stream for --file',
      },
    ],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const [app, key, value] = ctx.args as [string, string, string | undefined];
      const file = ctx.options.file as string | undefined;
      if ((value === undefined) === (file === undefined)) throw usage('give the value, or --file <file>, not both');
      let bytes: string | Uint8Array = value ?? '';
      if (file !== undefined) {
        try {
          bytes = await fs.readFile(file);
        } catch {
          throw invalidInput(`cannot read ${file}`);
        }
      }
      const client = await ctx.client();
      const contentType = ctx.options.contentType as string | undefined;
      return (await client.kv.set(app, key, bytes, { ...ctx.guarded(), contentType })).data;
    },
    human: (entry) => [fields(['key', entry.key], ['revision', entry.revision], ['size', formatBytes(entry.bytes)])],
    ids: (entry) => [entry.key],
  }),
  command({
    name: 'kv delete',
    summary: 'delete an entry at the revision you read (--if-match is required)',
    arguments: ['<application-id>', '<key>'],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const [app, key] = ctx.args as [string, string];
      const revision = ctx.options.ifMatch as number | undefined;
      if (revision === undefined)
        throw usage('kv delete needs --if-match <revision>: the revision you read (marquee kv get shows it)');
      await (await ctx.client()).kv.delete(app, key, revision, ctx.call());
      return { application_id: app, key, deleted: true };
    },
    human: (r) => [lines(`deleted ${r.key}`)],
    ids: (r) => [r.key],
  }),
];
