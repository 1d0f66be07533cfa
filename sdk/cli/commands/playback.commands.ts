// Proof of play: the daily rows per screen, media or application, as a table, or with --csv the
// server's CSV for an advertiser's spreadsheet (printed, or written verbatim with --output).
import fs from 'node:fs/promises';
import type { PlaybackRow } from '../../contract/playback';
import { command } from '../command';
import { usage } from '../exit-codes';
import { lines, table } from '../output';

export type PlaybackResult = { items: PlaybackRow[] } | { csv: string; written_to: string | null };

export const playbackCommands = [
  command({
    name: 'playback',
    summary: 'proof of play: plays per screen, media or application, and day (the screen’s time zone)',
    options: [
      { flags: '--screen <id>', description: 'only this screen (scr_…)' },
      { flags: '--media <id>', description: 'only this media (med_…)' },
      { flags: '--application <id>', description: 'only this application (app_…)' },
      { flags: '--day <YYYY-MM-DD>', description: 'only this day' },
      { flags: '--from <YYYY-MM-DD>', description: 'from this day on' },
      { flags: '--to <YYYY-MM-DD>', description: 'up to this day' },
      { flags: '--csv', description: 'the rows as CSV (RFC 4180), for spreadsheets' },
      { flags: '-o, --output <file>', description: 'with --csv: write the CSV to this file' },
    ],
    async run(ctx): Promise<PlaybackResult> {
      const o = ctx.options;
      if (o.output !== undefined && !o.csv) throw usage('--output needs --csv');
      const filter = {
        screen_id: o.screen as string | undefined,
        media_id: o.media as string | undefined,
        application_id: o.application as string | undefined,
        day: o.day as string | undefined,
        from: o.from as string | undefined,
        to: o.to as string | undefined,
      };
      const client = await ctx.client();
      if (!o.csv) return { items: await client.playback.all(filter, { signal: ctx.signal }) };
      const csv = await client.playback.csv(filter, { signal: ctx.signal });
      if (typeof o.output === 'string') {
        await fs.writeFile(o.output, csv);
        return { csv, written_to: o.output };
      }
      return { csv, written_to: null };
    },
    human: (r) => {
      if ('csv' in r)
        return r.written_to !== null ? [lines(`wrote ${r.written_to}`)] : [lines(...r.csv.split('\r\n').slice(0, -1))];
      return [
        table(
          ['day', 'screen', 'content', 'filename', 'plays', 'seconds', 'interrupted', 'impressions', 'last start'],
          r.items.map((p) => [
            p.day,
            p.screen_id,
            p.media_id ?? p.application_id,
            p.filename,
            p.play_count,
            p.played_seconds,
            p.interrupted_count,
            p.impression_count,
            p.last_started_at,
          ]),
          'no plays recorded',
        ),
      ];
    },
  }),
];
