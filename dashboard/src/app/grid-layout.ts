// The arithmetic of a virtual grid: how many columns CSS's `repeat(auto-fill, minmax(min, 1fr))`
// makes at a width, which items a row holds, and where a card drawn out of flow sits.

/** Columns `repeat(auto-fill, minmax(min, 1fr))` with `gap` between them makes in `width` pixels. */
export function gridColumns(width: number, min: number, gap: number): number {
  if (!(width > 0) || !(min > 0)) return 1;
  return Math.max(1, Math.floor((width + gap) / (min + gap)));
}

/** The items of row `row` when `columns` fit a row: [first, end). */
export function rowItems(row: number, columns: number, count: number): [number, number] {
  return [Math.min(count, row * columns), Math.min(count, (row + 1) * columns)];
}

/** Left offset and width of item `index`'s cell, as the grid lays it out, in pixels. */
export function cellBox(index: number, columns: number, width: number, gap: number): { left: number; width: number } {
  const cell = (width - gap * (columns - 1)) / columns;
  return { left: (index % columns) * (cell + gap), width: cell };
}
