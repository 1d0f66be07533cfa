// The canvas drawing: placements where they sit, in percent of the canvas, cut to it; the box fitted.
import { describe, expect, it } from 'vitest';
import { fitted, placementBox, scaleCaption } from './canvas-scale';

const hd = { width: 1920, height: 1080 };

describe('placementBox', () => {
  it('puts a placement at its place and size in percent of the canvas', () => {
    expect(placementBox({ x: 0, y: 0, width: 1920, height: 1080 }, hd)).toEqual({
      left: 0,
      top: 0,
      width: 100,
      height: 100,
    });
    expect(placementBox({ x: 1440, y: 810, width: 480, height: 270 }, hd)).toEqual({
      left: 75,
      top: 75,
      width: 25,
      height: 25,
    });
  });

  it('cuts a placement that runs off the canvas, and drops one wholly outside', () => {
    expect(placementBox({ x: -960, y: 540, width: 1920, height: 1080 }, hd)).toEqual({
      left: 0,
      top: 50,
      width: 50,
      height: 50,
    });
    expect(placementBox({ x: 2000, y: 0, width: 100, height: 100 }, hd)).toBeNull();
  });

  it('works on a portrait canvas', () => {
    expect(placementBox({ x: 0, y: 960, width: 540, height: 960 }, { width: 1080, height: 1920 })).toEqual({
      left: 0,
      top: 50,
      width: 50,
      height: 50,
    });
  });
});

describe('fitted', () => {
  it('is the largest box of the canvas ratio inside the bounds', () => {
    expect(fitted(hd, { width: 320, height: 320 })).toEqual({ width: 320, height: 180, scale: 320 / 1920 });
    expect(fitted({ width: 1080, height: 1920 }, { width: 320, height: 320 })).toEqual({
      width: 180,
      height: 320,
      scale: 320 / 1920,
    });
  });
});

describe('scaleCaption', () => {
  it('says the canvas size and the scale it is drawn at', () => {
    expect(scaleCaption(hd, 320)).toBe('1920×1080 at 17 %');
    expect(scaleCaption({ width: 7680, height: 4320 }, 320)).toBe('7680×4320 at 4.2 %');
  });
});
