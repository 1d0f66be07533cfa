import { describe, expect, it } from 'vitest';
import { backgroundCss, canvasTransform, paintOrder, transformCss } from './canvas-layout';

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
});
