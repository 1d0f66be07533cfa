// A screen's display state as stored (screen_displays): read by the display commands and handed to
// every new runtime session (pairing.ts), so it lives apart from the commands that change it.
import type { DisplayPower, DisplaySchedule, DisplayState } from '../../sdk/contract/fleet';
import { json, type Db, type Tx } from '../store/store';

/** The screen's display state (an override beats the schedule; neither: on). */
export async function displayOf(db: Db | Tx, screenId: string): Promise<DisplayState> {
  const row = await db
    .selectFrom('screen_displays')
    .select(['power', 'schedule'])
    .where('screen_id', '=', screenId)
    .executeTakeFirst();
  return {
    power: (row?.power as DisplayPower | null | undefined) ?? null,
    schedule: row ? json.read<DisplaySchedule>(row.schedule) : null,
  };
}
