// The setup page a TV's browser shows (GET /setup on the play origin): plain HTML that works with
// no JavaScript at all. Without a code it offers a button (a form POST); with one it shows the code
// large and refreshes itself, and once the code is claimed it moves on to the continue step.
import { BROWSER_LINK_CONTINUE_PATH, type BrowserLinkStatus } from '../../sdk/contract/browser-links';

/** How often an unclaimed setup page looks again (a meta refresh: no script needed). */
export const SETUP_REFRESH_SECONDS = 5;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `
  html, body { margin: 0; height: 100%; background: #0f1720; color: #f2f5f8; font-family: system-ui, sans-serif; }
  main { min-height: 100%; display: flex; flex-direction: column; align-items: center; justify-content: center; gap: 2.5vh; text-align: center; padding: 4vh 6vw; box-sizing: border-box; }
  h1 { font-size: 4vh; font-weight: 600; margin: 0; }
  .code { font-size: 16vh; font-weight: 700; letter-spacing: 0.12em; font-variant-numeric: tabular-nums; }
  p { font-size: 3vh; margin: 0; max-width: 60ch; color: #c9d3dd; }
  code { font-size: 0.95em; color: #f2f5f8; }
  button { font-size: 3.5vh; padding: 1.5vh 4vh; border-radius: 1vh; border: 0; background: #3d8bfd; color: #fff; }
  button:focus { outline: 0.5vh solid #f2f5f8; outline-offset: 0.5vh; }`;

function page(refresh: string | undefined, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
${refresh ? `<meta http-equiv="refresh" content="${refresh}">` : ''}
<title>Set up this screen · Marquee</title>
<style>${STYLE}</style>
</head>
<body><main>${body}</main></body>
</html>`;
}

export function renderSetupPage(status: BrowserLinkStatus | undefined): string {
  if (!status) {
    return page(
      undefined,
      `<h1>Set up this screen</h1>
<p>Get a setup code, then give it to whoever manages your screens.</p>
<form method="post" action="/runtime/v1/browser-links"><button type="submit" autofocus>Show a setup code</button></form>`,
    );
  }
  if (status.status === 'claimed') {
    return page(
      `1;url=${BROWSER_LINK_CONTINUE_PATH}`,
      `<h1>Code accepted</h1>
<p>Starting the player… If nothing happens, <a href="${BROWSER_LINK_CONTINUE_PATH}" style="color:#9cc3ff">continue</a>.</p>`,
    );
  }
  return page(
    String(SETUP_REFRESH_SECONDS),
    `<h1>Set up this screen</h1>
<div class="code" aria-label="setup code">${escapeHtml(status.code)}</div>
<p>Give this code to whoever manages your screens. With the Marquee CLI:
<code>marquee screen link ${escapeHtml(status.code)}</code></p>
<p>This page moves on by itself once the code is claimed. The code expires at ${escapeHtml(
      new Date(status.expires_at).toUTCString(),
    )}.</p>`,
  );
}
