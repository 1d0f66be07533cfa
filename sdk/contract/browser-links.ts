// Browser links: a TV's browser (no player app, no JavaScript needed) shows a setup code, an agent
// claims it, and the browser continues to the new screen's provisioning link.
import { z } from 'zod';
import { PAIRING_CODE_ALPHABET, PAIRING_CODE_PATTERN } from './screens';

/** Where the browser continues once claimed: a 303 to the provisioning link, never shown as data. */
export const BROWSER_LINK_CONTINUE_PATH = '/runtime/v1/browser-links/continue';
/** The page a TV opens (and a form-posting browser is sent to): the code, refreshed until claimed. */
export const BROWSER_LINK_SETUP_PATH = '/setup';

/** `ABC-234`, `abc234` and `ABC234` name the same code. */
export const BrowserLinkCode = z
  .string()
  .max(16)
  .transform((text) => text.replace(/[\s-]/g, '').toUpperCase())
  .pipe(
    z
      .string()
      .regex(PAIRING_CODE_PATTERN, `must be six characters of ${PAIRING_CODE_ALPHABET} (a dash may follow the third)`),
  );

export const BrowserLinkClaimRequest = z.strictObject({
  code: BrowserLinkCode,
  label: z.string().min(1).max(120).optional(),
});
export type BrowserLinkClaimRequest = z.input<typeof BrowserLinkClaimRequest>;

/** What the browser sees of its link: never the provisioning link itself. */
export interface BrowserLinkStatus {
  status: 'issued' | 'claimed';
  /** As shown on glass: `ABC-234`. */
  code: string;
  /** Issued: claimable until then. Claimed: continue before then. */
  expires_at: string;
  /** Claimed only: open this (a navigation) to be sent on to the screen's player. */
  continue_path?: typeof BROWSER_LINK_CONTINUE_PATH;
}

/** The agent's answer: safe metadata only (no token, no fragment URL, no cookie). */
export interface BrowserLinkClaim {
  session_id: string;
  status: 'claimed';
  screen: { id: string; public_id: string; state: 'pairing_pending'; public_url: string };
}
