// Browser links (the hosted peer's "browser setup"): a TV's browser asks for a setup code and shows
// it; an agent claims the code, which creates a pairing_pending screen with a browser provisioning
// grant; the browser then continues to the screen's provisioning link and provisions itself. The
// link lives thirty minutes unclaimed; the provisioning link it leads to may be collected for ten
// minutes after the claim (a reload of the continue step inside that window is the repair path).
import type { BrowserLinkClaim, BrowserLinkStatus } from '../../sdk/contract/browser-links';
import { BROWSER_LINK_CONTINUE_PATH } from '../../sdk/contract/browser-links';
import { displayPairingCode } from '../../sdk/contract/screens';
import { isoTime } from '../clock';
import { newId } from '../keys';
import { problem } from '../problem';
import type { Services } from '../services';
import type { Db, Tx, Work } from '../store/store';
import { newPairingCode, PROVISIONING_WINDOW_MS, provisionScreen } from './pairing';
import type { BrowserLinkTable } from './browser-links.tables';

/** The unclaimed window of a browser link (and of its cookie). */
export const BROWSER_LINK_TTL_MS = 30 * 60_000;
/** Links one client IP may hold unclaimed at once (the peer's outstanding budget). */
export const BROWSER_LINKS_OUTSTANDING_PER_IP = 5;
/** Notifier channel the browser's status stream waits on. */
export const browserLinkChannel = (id: string) => `browser-link:${id}`;

export function statusOf(row: BrowserLinkTable): BrowserLinkStatus {
  if (row.state === 'issued')
    return { status: 'issued', code: displayPairingCode(row.code), expires_at: isoTime(row.expires_at) };
  return {
    status: 'claimed',
    code: displayPairingCode(row.code),
    expires_at: isoTime(row.delivery_expires_at!),
    continue_path: BROWSER_LINK_CONTINUE_PATH,
  };
}

/** The link a cookie names, if it is still of use: issued and unexpired, or claimed within delivery. */
export async function liveLink(db: Db | Tx, id: string, now: number): Promise<BrowserLinkTable | undefined> {
  const row = await db.selectFrom('browser_links').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  if (row.state === 'issued') return row.expires_at > now ? row : undefined;
  return row.delivery_expires_at! > now ? row : undefined;
}

/**
 * The browser's link: the one its cookie names while still issued, else a new one with a code no
 * live link holds. At most BROWSER_LINKS_OUTSTANDING_PER_IP unclaimed links per client IP.
 */
export async function startBrowserLink(
  work: Work,
  input: { current: string | undefined; ip: string },
  now: number,
): Promise<{ row: BrowserLinkTable; reused: boolean }> {
  if (input.current !== undefined) {
    const current = await liveLink(work.db, input.current, now);
    if (current?.state === 'issued') return { row: current, reused: true };
  }
  // The address's unclaimed links are counted, then one is added: one start per address at a time
  // where transactions run side by side, or requests arriving together all pass the budget.
  await work.lock(`browser-links:${input.ip}`);
  const outstanding = await work.db
    .selectFrom('browser_links')
    .select('expires_at')
    .where('ip', '=', input.ip)
    .where('state', '=', 'issued')
    .where('expires_at', '>', now)
    .orderBy('expires_at')
    .execute();
  if (outstanding.length >= BROWSER_LINKS_OUTSTANDING_PER_IP) {
    const seconds = Math.max(1, Math.ceil((outstanding[0]!.expires_at - now) / 1000));
    throw problem(
      'rate_limited',
      `this address holds ${outstanding.length} unclaimed setup codes; use one of them or wait for one to expire`,
      { retryAfter: seconds },
    );
  }
  for (let attempt = 0; ; attempt++) {
    const code = newPairingCode();
    // A code is free again once its link can no longer be used.
    await work.db
      .deleteFrom('browser_links')
      .where('code', '=', code)
      .where((eb) =>
        eb.or([
          eb.and([eb('state', '=', 'issued'), eb('expires_at', '<=', now)]),
          eb.and([eb('state', '!=', 'issued'), eb('delivery_expires_at', '<=', now)]),
        ]),
      )
      .execute();
    const row: BrowserLinkTable = {
      id: newId('blink'),
      code,
      ip: input.ip,
      state: 'issued',
      created_at: now,
      expires_at: now + BROWSER_LINK_TTL_MS,
      tenant_id: null,
      screen_id: null,
      claimed_at: null,
      delivery_expires_at: null,
      delivery: null,
    };
    const inserted = await work.db
      .insertInto('browser_links')
      .values(row)
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows) === 1) return { row, reused: false };
    if (attempt >= 8) throw new Error('no free browser-link code after 9 attempts');
  }
}

/**
 * An agent claims the code: a pairing_pending screen with a browser provisioning grant, whose link
 * is kept encrypted for the browser's continue step. Unknown and expired codes answer alike
 * (not_found); a code already claimed is resource_conflict.
 */
export async function claimBrowserLink(
  services: Services,
  work: Work,
  input: { tenantId: string; code: string; label: string; requestId: string },
  now: number,
  publicUrl: (publicId: string) => string,
): Promise<BrowserLinkClaim> {
  const row = await work.db.selectFrom('browser_links').selectAll().where('code', '=', input.code).executeTakeFirst();
  if (!row || (row.state === 'issued' && row.expires_at <= now))
    throw problem('not_found', 'no browser is showing this setup code (it may have expired); ask for a new one');
  if (row.state !== 'issued') throw problem('resource_conflict', 'this setup code was already claimed');
  const { screen, token } = await provisionScreen(
    services,
    work,
    { tenantId: input.tenantId, label: input.label },
    now,
    input.requestId,
  );
  const url = publicUrl(screen.public_id);
  const claimed = await work.db
    .updateTable('browser_links')
    .set({
      state: 'claimed',
      tenant_id: input.tenantId,
      screen_id: screen.id,
      claimed_at: now,
      delivery_expires_at: now + PROVISIONING_WINDOW_MS,
      delivery: services.keys.encrypt('browser-link-delivery', `${url}#provision=${token}`),
    })
    .where('id', '=', row.id)
    .where('state', '=', 'issued')
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) throw problem('resource_conflict', 'this setup code was already claimed');
  work.afterCommit(() => services.notifier.publish(browserLinkChannel(row.id)));
  return {
    session_id: row.id,
    status: 'claimed',
    screen: { id: screen.id, public_id: screen.public_id, state: 'pairing_pending', public_url: url },
  };
}

/** The provisioning link to send the browser on to; the delivery stays readable until its window closes. */
export function deliveryOf(services: Services, row: BrowserLinkTable, now: number): string {
  if (row.state === 'issued') throw problem('resource_conflict', 'this setup code is not claimed yet');
  if (row.delivery === null || row.delivery_expires_at! <= now)
    throw problem('link_expired', 'this setup link expired; ask for a new code');
  return services.keys.decrypt('browser-link-delivery', row.delivery);
}

/** Housekeeping: deliveries past their window are erased, links nobody can use are deleted. */
export async function sweepBrowserLinks(db: Db | Tx, now: number): Promise<void> {
  await db
    .deleteFrom('browser_links')
    .where((eb) =>
      eb.or([
        eb.and([eb('state', '=', 'issued'), eb('expires_at', '<=', now)]),
        eb.and([eb('state', '!=', 'issued'), eb('delivery_expires_at', '<=', now)]),
      ]),
    )
    .execute();
}
