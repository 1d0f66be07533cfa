import { describe, expect, it } from 'vitest';
import {
  backgroundCss,
  canvasTransform,
  paintOrder,
  regionClipCss,
  regionTransform,
  transformCss,
} from './canvas-layout';

const canvas = { width: 1920, height: 1080 };

describe('canvas layout', () => {
  it('contains a landscape canvas in a portrait viewport, centred with bars above and below', () => {
    expect(canvasTransform(canvas, { width: 1080, height: 1920 }, 'contain')).toEqual({
      scaleX: 0.5625,
      scaleY: 0.5625,
      offsetX: 0,
      offsetY: (1920 - 607.5) / 2,
    });
  });

  it('covers by cropping the overflowing axis, centred', () => {
    const t = canvasTransform(canvas, { width: 1080, height: 1920 }, 'cover');
    expect(t.scaleX).toBeCloseTo(1920 / 1080);
    expect(t.offsetY).toBe(0);
    expect(t.offsetX).toBeCloseTo((1080 - 1920 * (1920 / 1080)) / 2);
  });

  it('fills by stretching each axis', () => {
    expect(canvasTransform(canvas, { width: 1280, height: 1024 }, 'fill')).toEqual({
      scaleX: 1280 / 1920,
      scaleY: 1024 / 1080,
      offsetX: 0,
      offsetY: 0,
    });
  });

  it('is the identity at the canvas size', () => {
    for (const fit of ['contain', 'cover', 'fill'] as const)
      expect(transformCss(canvasTransform(canvas, canvas, fit))).toBe('translate(0px, 0px) scale(1, 1)');
  });

  it('paints solid colours as is and gradients top to bottom', () => {
    expect(backgroundCss('#1B2632FF')).toBe('#1B2632FF');
    expect(
      backgroundCss({
        type: 'linear',
        stops: [
          { at: 0, color: '#1B2632FF' },
          { at: 0.25, color: '#336699FF' },
          { at: 1, color: '#000000FF' },
        ],
      }),
    ).toBe('linear-gradient(to bottom, #1B2632FF 0%, #336699FF 25%, #000000FF 100%)');
  });

  it('orders paint by layer with ties in array order', () => {
    expect(paintOrder([5, 0, 5, 1])).toEqual([3, 1, 4, 2]);
  });

  it('puts a wall region of a 3840×2160 canvas on a 1920×1080 screen at scale 1', () => {
    const region = { x: 1920, y: 1080, width: 1920, height: 1080 };
    expect(regionTransform(region, { width: 1920, height: 1080 }, 'contain')).toEqual({
      scaleX: 1,
      scaleY: 1,
      offsetX: -1920,
      offsetY: -1080,
    });
    // On a smaller screen the region is scaled like a canvas, and still lands on the viewport.
    const t = regionTransform(region, { width: 960, height: 540 }, 'fill');
    expect([t.scaleX, t.scaleY, t.offsetX, t.offsetY]).toEqual([0.5, 0.5, -960, -540]);
  });

  it('fits a region of another aspect by the page fit, centred, and clips the canvas to it', () => {
    const region = { x: 100, y: 0, width: 1000, height: 1000 };
    const t = regionTransform(region, { width: 1920, height: 1080 }, 'contain');
    expect(t.scaleX).toBeCloseTo(1.08);
    // Centred: (1920 - 1080) / 2 of bar on the left, then the region's own offset.
    expect(t.offsetX).toBeCloseTo(420 - 108);
    expect(t.offsetY).toBeCloseTo(0);
    expect(regionClipCss({ width: 3840, height: 2160 }, region)).toBe('inset(0px 2740px 1160px 100px)');
  });
});
