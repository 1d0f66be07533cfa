// The player runs only as the top-level document. Any frame can navigate itself to the player
// origin (an iframe placement's site, an uploaded application, another site that frames the
// player), and a player running there would act on `#provision=` or `/s/<id>` with the screen's
// own cookies. The server also refuses to be framed; this holds even where its headers do not
// reach (a cached shell, a proxy that drops them).

/** True when `win` is not the top-level browsing context (cross-origin parents included). */
export function isFramed(win: { readonly top: unknown; readonly self: unknown }): boolean {
  try {
    return win.top !== win.self;
  } catch {
    // Reading `top` never throws in today's browsers; if it ever does, assume the worst.
    return true;
  }
}
