// Proof of play: the daily rows per screen, media or application (GET /api/v1/playback), a page at
// a time, every page, or the whole selection as CSV text for an advertiser's spreadsheet.
import type { PlaybackList, PlaybackQuery, PlaybackRow } from '../contract/playback';
import type { CallOptions, ClientTransport } from './transport';

/** The filters of the list (all optional); `day` or `from`/`to` are screen-local calendar days. */
export type PlaybackFilter = Omit<PlaybackQuery, 'format' | 'cursor' | 'limit'>;

export function playbackRoutes(t: ClientTransport) {
  const page = (filter: PlaybackFilter & { cursor?: string; limit?: number } = {}, options: CallOptions = {}) =>
    t.request<PlaybackList>({ method: 'GET', path: '/api/v1/playback', query: { ...filter }, ...options });
  return {
    /** One page, newest day first; follow `next_cursor` for more. */
    list: page,
    /** Every matching row, following the cursor. */
    async all(filter: PlaybackFilter = {}, options: CallOptions = {}): Promise<PlaybackRow[]> {
      const rows: PlaybackRow[] = [];
      let cursor: string | undefined;
      do {
        const { data } = await page({ ...filter, cursor }, options);
        rows.push(...data.items);
        cursor = data.next_cursor ?? undefined;
      } while (cursor);
      return rows;
    },
    /** Every matching row as CSV (RFC 4180, a header line, CRLF). */
    async csv(filter: PlaybackFilter = {}, options: CallOptions = {}): Promise<string> {
      const { data } = await t.request<string>({
        method: 'GET',
        path: '/api/v1/playback',
        query: { ...filter },
        headers: { Accept: 'text/csv' },
        ...options,
      });
      return data ?? '';
    },
  };
}
