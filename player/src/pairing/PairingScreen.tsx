// The pairing screen: the code large in its dashed display form, short instructions, a QR code of
// the pairing hint, and a quiet note of when the code is replaced.
import QRCode from 'qrcode';
import { useEffect, useState } from 'react';
import { displayPairingCode } from '../../../sdk/contract/screens';
import type { PairingView } from '../state/player-store';
import { codeReplacedIn } from './code-replacement';
import { CODE_RENEWAL_MARGIN_MS } from './pairing-flow';

/** What the QR code carries: the configured hint URL with the code, or the code itself. */
export function pairingHint(code: string, hintUrl: string | undefined): string {
  return hintUrl ? hintUrl.replace('{code}', encodeURIComponent(code)) : code;
}

export function PairingScreen({ pairing, hintUrl }: { pairing: PairingView | null; hintUrl?: string }) {
  const [qr, setQr] = useState('');
  const [now, setNow] = useState(() => Date.now());
  const code = pairing?.code ?? null;

  useEffect(() => {
    if (!code) return;
    let cancelled = false;
    void QRCode.toString(pairingHint(code, hintUrl), {
      type: 'svg',
      margin: 0,
      errorCorrectionLevel: 'M',
      color: { dark: '#0A0E13FF', light: '#00000000' },
    }).then((svg) => {
      if (!cancelled) setQr(svg);
    });
    return () => {
      cancelled = true;
    };
  }, [code, hintUrl]);

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(timer);
  }, []);

  const display = code ? displayPairingCode(code) : '···-···';
  const [left, right] = display.split('-');
  const replacedIn = pairing ? codeReplacedIn(pairing.expiresAt - CODE_RENEWAL_MARGIN_MS - now) : null;
  return (
    <main className="pairing" data-testid="pairing-screen">
      <div className="wordmark">Marquee</div>
      <section className="pairing-main">
        <p className="pairing-eyebrow">Pair this screen</p>
        <p className="pairing-code" role="img" aria-label={`Pairing code ${display}`} data-testid="pairing-code">
          {left}
          <span className="dash">-</span>
          {right}
        </p>
        <ul className="pairing-steps">
          <li>
            Give this code to <strong>whoever manages your screens</strong>.
          </li>
          <li className="pairing-status">
            <span className="pairing-waiting" aria-hidden="true" />
            Waiting to be paired; content starts right after.
          </li>
        </ul>
        {replacedIn !== null && <p className="pairing-expiry">This code is replaced {replacedIn}.</p>}
      </section>
      {qr && (
        <aside className="pairing-qr">
          <div
            className="qr"
            role="img"
            aria-label="QR code of the pairing code"
            // biome-ignore lint/security/noDangerouslySetInnerHtml: the SVG is made locally by qrcode from the code (or the pairing link with it)
            dangerouslySetInnerHTML={{ __html: qr }}
          />
          <span>{hintUrl ? 'Scan to pair it from your phone' : 'Scan to copy the code'}</span>
        </aside>
      )}
    </main>
  );
}
