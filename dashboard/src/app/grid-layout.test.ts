import { describe, expect, it } from 'vitest';
import { cellBox, gridColumns, rowItems } from './grid-layout';

describe('gridColumns', () => {
  it('matches auto-fill: as many minimum columns as fit with their gaps', () => {
    // 16rem cards, 1rem gaps: the desktop content width fits four, a phone one.
    expect(gridColumns(1100, 256, 16)).toBe(4);
    expect(gridColumns(256 * 4 + 16 * 3, 256, 16)).toBe(4);
    expect(gridColumns(256 * 4 + 16 * 3 - 1, 256, 16)).toBe(3);
    expect(gridColumns(350, 256, 16)).toBe(1);
  });
  it('is one column before the list is measured or when narrower than a card', () => {
    expect(gridColumns(0, 256, 16)).toBe(1);
    expect(gridColumns(100, 256, 16)).toBe(1);
  });
});

describe('rowItems', () => {
  it('gives each row its slice, the last one short', () => {
    expect(rowItems(0, 4, 10)).toEqual([0, 4]);
    expect(rowItems(2, 4, 10)).toEqual([8, 10]);
    expect(rowItems(3, 4, 10)).toEqual([10, 10]);
  });
});

describe('cellBox', () => {
  it('places a card in its column with the gaps between', () => {
    expect(cellBox(0, 3, 800, 16)).toEqual({ left: 0, width: 256 });
    expect(cellBox(5, 3, 800, 16)).toEqual({ left: 544, width: 256 });
  });
});
