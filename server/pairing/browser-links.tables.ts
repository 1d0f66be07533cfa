/** A browser link: a setup code a TV's browser shows until an agent claims it (pairing/browser-links.ts). */
export interface BrowserLinkTable {
  /** `blink_…`, named by the browser-link cookie. */
  id: string;
  /** Six characters of the pairing alphabet, unique while the row lives. */
  code: string;
  /** The client IP that asked (the outstanding budget counts per IP). */
  ip: string;
  state: 'issued' | 'claimed' | 'delivered';
  created_at: number;
  /** Claimable (and the cookie valid) until then: thirty minutes. */
  expires_at: number;
  tenant_id: string | null;
  screen_id: string | null;
  claimed_at: number | null;
  /** The provisioning link may be collected until then: ten minutes after the claim. */
  delivery_expires_at: number | null;
  /** The provisioning URL, encrypted with the server's keys; erased once its window closed. */
  delivery: string | null;
}

export interface BrowserLinkTables {
  browser_links: BrowserLinkTable;
}
