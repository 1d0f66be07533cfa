// Durable events: a page of the list, or follow them live. A follow resumes after a dropped
// connection at the last event it handled (the SSE client reconnects with that cursor), and with
// --resume a later follow continues where this one stopped (the cursor is kept in the config file).
import type { MarqueeClient } from '../../client/marquee-client';
import type { EventList, EventRecord } from '../../contract/events';
import { command } from '../command';
import { usage } from '../exit-codes';
import { lines, table, type Value } from '../output';

/** How often a --resume follow writes its cursor to the config file (and once at the end). */
const CURSOR_SAVE_INTERVAL_MS = 1000;
/** Largest page of the list (spec-side limit): how a follow finds the head without replaying. */
const LIST_PAGE = 200;

function eventRow(e: EventRecord): Value[] {
  return [e.sequence, e.at, e.type, e.resource ? `${e.resource.type} ${e.resource.id}` : undefined, e.message];
}

/** The cursor after the newest retained event: pages through the list to its end. */
async function headCursor(client: MarqueeClient): Promise<string | undefined> {
  let after: string | undefined;
  for (;;) {
    const page = (await client.events.list({ after, limit: LIST_PAGE })).data;
    if (page.items.length < LIST_PAGE) return page.next_cursor;
    after = page.next_cursor;
  }
}

export interface FollowResult {
  items: EventRecord[];
  /** Resume after the last event handled with --after <cursor> (or --resume). */
  cursor: string | null;
  /**
   * The cursor given could not be resumed (pruned, or not this stream's): the follow went on at the
   * newest event, so what came between was not seen; read the state you need again.
   */
  resync?: { reason: string };
}

export const eventCommands = [
  command({
    name: 'events list',
    summary: 'list durable events, oldest retained first',
    options: [
      { flags: '--after <cursor>', description: 'only events after this cursor (a next_cursor)' },
      { flags: '--limit <n>', description: 'at most this many (1 to 200, default 100)', parse: 'positive-int' },
    ],
    async run(ctx): Promise<EventList> {
      const client = await ctx.client();
      return (
        await client.events.list({
          after: ctx.options.after as string | undefined,
          limit: ctx.options.limit as number | undefined,
        })
      ).data;
    },
    human: (list) => [
      table(['seq', 'at', 'type', 'resource', 'message'], list.items.map(eventRow), 'no events'),
      lines(`next: --after ${list.next_cursor}`),
    ],
    ids: (list) => list.items.map((e) => e.cursor),
  }),
  command({
    name: 'events follow',
    summary: 'print events as they happen (new ones, or after --after / --resume / --from-start)',
    description:
      'Ends on Ctrl-C (exit 0), after --timeout seconds or --count events. With --json the events come in one\nenvelope at the end, with the cursor to resume after them.',
    options: [
      { flags: '--after <cursor>', description: 'start after this cursor' },
      { flags: '--resume', description: 'start where the last follow with --resume stopped' },
      { flags: '--from-start', description: 'replay every retained event first' },
      { flags: '--type <prefix>', description: 'only events whose type starts with this (screen., kv.)' },
      { flags: '--timeout <seconds>', description: 'stop after this long', parse: 'positive-number' },
      { flags: '--count <n>', description: 'stop after this many events', parse: 'positive-int' },
    ],
    async run(ctx): Promise<FollowResult> {
      const { after, resume, fromStart, type, timeout, count } = ctx.options as {
        after?: string;
        resume?: boolean;
        fromStart?: boolean;
        type?: string;
        timeout?: number;
        count?: number;
      };
      if ([after !== undefined, resume === true, fromStart === true].filter(Boolean).length > 1)
        throw usage('choose one of --after, --resume and --from-start');
      const client = await ctx.client();
      const stored = resume ? (await ctx.config.read()).servers[ctx.apiUrl]?.events_cursor : undefined;
      const cursor = after ?? stored ?? (fromStart ? undefined : await headCursor(client));
      // --resume keeps the cursor in the config file: written at most once a second, and at the end.
      let saved = stored;
      let lastSave = 0;
      const save = async (force: boolean) => {
        if (!resume || last === null || last === saved || (!force && Date.now() - lastSave < CURSOR_SAVE_INTERVAL_MS))
          return;
        const at = last;
        lastSave = Date.now();
        await ctx.config.update((c) => {
          (c.servers[ctx.apiUrl] ??= {}).events_cursor = at;
        });
        saved = at;
      };

      const items: EventRecord[] = [];
      let last: string | null = cursor ?? null;
      let resynced: FollowResult['resync'];
      const stop = new AbortController();
      const end = () => stop.abort();
      ctx.signal.addEventListener('abort', end, { once: true });
      const timer = timeout === undefined ? undefined : setTimeout(end, timeout * 1000);
      const stream = client.events.follow({
        cursor,
        signal: stop.signal,
        onEvent: async (message) => {
          // A replay hands over a whole read at once: what comes after the end is neither shown nor resumed past.
          if (stop.signal.aborted) return;
          const event = message.data;
          last = message.cursor ?? last;
          await save(false);
          if (type !== undefined && !event.type.startsWith(type)) return;
          items.push(event);
          ctx.emit([
            lines(
              eventRow(event)
                .map((value) => value ?? '-')
                .join('  '),
            ),
          ]);
          if (count !== undefined && items.length >= count) end();
        },
        onResync: (resync) => {
          // The stream goes on at the head: so does the cursor to resume after, never the refused one.
          last = resync.cursor ?? last;
          resynced = { reason: resync.details.reason };
          ctx.note(`the cursor could not be resumed (${resync.details.reason}); continuing at the newest event`);
        },
      });
      try {
        await stream.done;
      } finally {
        clearTimeout(timer);
        ctx.signal.removeEventListener('abort', end);
      }
      await save(true);
      return { items, cursor: last, ...(resynced ? { resync: resynced } : {}) };
    },
    human: (r) => [lines(`${r.items.length} events; resume with --after ${r.cursor ?? '(none)'}`)],
    ids: (r) => r.items.map((e) => e.cursor),
  }),
];
