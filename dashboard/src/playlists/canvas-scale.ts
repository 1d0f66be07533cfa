// The to-scale drawing of a page: its canvas as a box of the canvas's own aspect ratio, each
// placement where it sits as percentages of the canvas (so the drawing scales with its box), cut
// to the canvas as the player cuts it, and the scale the drawing is at. Pure.
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Size {
  width: number;
  height: number;
}

/** Where a placement is drawn, in percent of the canvas (left, top, width, height); null when it lies wholly outside. */
export interface PercentBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/**
 * `rect` (canvas pixels) as percentages of `canvas`, clipped to the canvas: the player's canvas
 * hides what lies outside it. Null for a placement that shows nothing on the canvas.
 */
export function placementBox(rect: Rect, canvas: Size): PercentBox | null {
  const left = Math.max(0, rect.x);
  const top = Math.max(0, rect.y);
  const right = Math.min(canvas.width, rect.x + rect.width);
  const bottom = Math.min(canvas.height, rect.y + rect.height);
  if (right <= left || bottom <= top) return null;
  return {
    left: round((100 * left) / canvas.width),
    top: round((100 * top) / canvas.height),
    width: round((100 * (right - left)) / canvas.width),
    height: round((100 * (bottom - top)) / canvas.height),
  };
}

/** The largest box of the canvas's aspect ratio inside `bounds`. */
export function fitted(canvas: Size, bounds: Size): Size & { scale: number } {
  const scale = Math.min(bounds.width / canvas.width, bounds.height / canvas.height);
  return { width: round(canvas.width * scale), height: round(canvas.height * scale), scale };
}

/** "1920×1080 at 17 %": what the drawing shows, for its caption. */
export function scaleCaption(canvas: Size, drawnWidth: number): string {
  const percent = (100 * drawnWidth) / canvas.width;
  const shown = percent >= 10 ? Math.round(percent) : Math.round(percent * 10) / 10;
  return `${canvas.width}×${canvas.height} at ${shown} %`;
}
