// Geometry and paint of a page canvas: how the canvas is scaled into the viewport (contain, cover,
// fill), or only a region of it on a video wall's screen; its background as CSS, and where each
// placement sits and in which paint order.
import type { CanvasBackground, ViewportFit } from '../../../sdk/contract/canvas';

export interface Size {
  width: number;
  height: number;
}

/** Canvas → viewport mapping: scale per axis, then offset in viewport pixels (origin top left). */
export interface CanvasTransform {
  scaleX: number;
  scaleY: number;
  offsetX: number;
  offsetY: number;
}

export function canvasTransform(canvas: Size, viewport: Size, fit: ViewportFit): CanvasTransform {
  const sx = viewport.width / canvas.width;
  const sy = viewport.height / canvas.height;
  if (fit === 'fill') return { scaleX: sx, scaleY: sy, offsetX: 0, offsetY: 0 };
  const s = fit === 'contain' ? Math.min(sx, sy) : Math.max(sx, sy);
  return {
    scaleX: s,
    scaleY: s,
    offsetX: (viewport.width - canvas.width * s) / 2,
    offsetY: (viewport.height - canvas.height * s) / 2,
  };
}

/** A rectangle in canvas coordinates (a video wall's region). */
export interface Region extends Size {
  x: number;
  y: number;
}

/**
 * A video wall's screen shows only `region` of the canvas: the region is fitted into the viewport
 * as a whole canvas would be (by the page's fit), and the canvas moved so the region lands there.
 */
export function regionTransform(region: Region, viewport: Size, fit: ViewportFit): CanvasTransform {
  const t = canvasTransform(region, viewport, fit);
  return { ...t, offsetX: t.offsetX - region.x * t.scaleX, offsetY: t.offsetY - region.y * t.scaleY };
}

/**
 * The clip that hides the canvas outside `region` (in the canvas's own coordinates, before its
 * transform), so bars left by a `contain` fit stay black instead of showing the neighbours' part.
 */
export function regionClipCss(canvas: Size, region: Region): string {
  const top = round(region.y);
  const right = round(canvas.width - region.x - region.width);
  const bottom = round(canvas.height - region.y - region.height);
  const left = round(region.x);
  return `inset(${top}px ${right}px ${bottom}px ${left}px)`;
}

export function transformCss(t: CanvasTransform): string {
  return `translate(${round(t.offsetX)}px, ${round(t.offsetY)}px) scale(${round(t.scaleX, 6)}, ${round(t.scaleY, 6)})`;
}

/** `#RRGGBBAA` is valid CSS as is; a linear gradient runs top to bottom through its stops. */
export function backgroundCss(background: CanvasBackground): string {
  if (typeof background === 'string') return background;
  const stops = background.stops.map((s) => `${s.color} ${round(s.at * 100, 4)}%`).join(', ');
  return `linear-gradient(to bottom, ${stops})`;
}

/**
 * Paint order of placements: by layer, ties in array order. Returned as z-index values so the DOM
 * can stay in array order (it is built once) while painting follows the layers.
 */
export function paintOrder(layers: readonly number[]): number[] {
  const order = layers.map((layer, index) => ({ layer, index })).sort((a, b) => a.layer - b.layer || a.index - b.index);
  const z = new Array<number>(layers.length);
  order.forEach((entry, rank) => (z[entry.index] = rank + 1));
  return z;
}

function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
