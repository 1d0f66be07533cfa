// A responsive card grid that draws only the rows near the viewport (@tanstack/react-virtual over
// the window's scroll), so a project with 500 screens or 2,000 media keeps a small DOM. The list
// stays one `<ul>` of `<li>` laid out by the page's CSS grid: the rows above and below the drawn ones
// are the list's own padding, each item says its place (aria-posinset/setsize), and the item holding
// focus stays drawn (out of flow, where it belongs) when it scrolls away, so focus is never dropped.
import { useWindowVirtualizer } from '@tanstack/react-virtual';
import { Fragment, type CSSProperties, type ReactNode, type Ref, useLayoutEffect, useRef, useState } from 'react';
import { cellBox, gridColumns, rowItems } from './grid-layout';

/** Rows drawn beyond each edge of the viewport: keyboard focus moving on always finds the next card drawn. */
const OVERSCAN_ROWS = 3;

/** The cards' grid in dashboard.css (`.screen-grid, .media-grid`): minmax(16rem, 1fr), gap 1rem. */
export const GRID_MIN_COLUMN_REM = 16;
export const GRID_GAP_REM = 1;

/** What the grid's `<li>` for an item must carry. */
export interface Cell {
  ref?: Ref<HTMLLIElement>;
  'data-index'?: number;
  'data-item': number;
  'aria-posinset': number;
  'aria-setsize': number;
  style?: CSSProperties;
}

export function VirtualGrid<T>({
  items,
  itemKey,
  label,
  className,
  minColumnRem,
  gapRem,
  estimateRowPx,
  renderItem,
}: {
  items: readonly T[];
  itemKey: (item: T) => string;
  label: string;
  className: string;
  /** The CSS grid's `minmax(<this>rem, 1fr)` and `gap`, which this must match. */
  minColumnRem: number;
  gapRem: number;
  /** A row's height before it is measured. */
  estimateRowPx: number;
  renderItem: (item: T, cell: Cell) => ReactNode;
}) {
  const list = useRef<HTMLUListElement>(null);
  const [box, setBox] = useState({ width: 0, rem: 16, top: 0 });
  const [focused, setFocused] = useState<number | null>(null);

  // Width (for the columns), the root font size (rem) and the list's place in the document (the
  // virtualizer's scroll margin), re-read when the list or what is above it changes size.
  useLayoutEffect(() => {
    const ul = list.current;
    if (!ul) return;
    const read = () => {
      const rect = ul.getBoundingClientRect();
      const next = {
        width: rect.width,
        rem: parseFloat(getComputedStyle(document.documentElement).fontSize) || 16,
        top: Math.round(rect.top + window.scrollY),
      };
      setBox((old) => (old.width === next.width && old.rem === next.rem && old.top === next.top ? old : next));
    };
    read();
    const observer = new ResizeObserver(read);
    observer.observe(ul);
    if (ul.parentElement) observer.observe(ul.parentElement);
    window.addEventListener('resize', read);
    return () => {
      observer.disconnect();
      window.removeEventListener('resize', read);
    };
  }, []);

  const gap = gapRem * box.rem;
  const columns = gridColumns(box.width, minColumnRem * box.rem, gap);
  const rows = Math.ceil(items.length / columns);
  const virtualizer = useWindowVirtualizer({
    count: rows,
    estimateSize: () => estimateRowPx,
    overscan: OVERSCAN_ROWS,
    scrollMargin: box.top,
    gap,
  });
  // A new column count makes every row a different set of items: measure again.
  const lastColumns = useRef(columns);
  useLayoutEffect(() => {
    if (lastColumns.current === columns) return;
    lastColumns.current = columns;
    virtualizer.measure();
  }, [columns, virtualizer]);

  const visible = virtualizer.getVirtualItems();
  const first = visible[0];
  const last = visible[visible.length - 1];
  const total = virtualizer.getTotalSize();
  const margin = virtualizer.options.scrollMargin;
  const style: CSSProperties =
    first && last ? { paddingTop: first.start - margin, paddingBottom: Math.max(0, total - (last.end - margin)) } : {};

  const cell = (index: number, rowStart: boolean, row: number): Cell => ({
    'data-item': index,
    'aria-posinset': index + 1,
    'aria-setsize': items.length,
    ...(rowStart ? { ref: virtualizer.measureElement, 'data-index': row } : {}),
  });
  const drawn: ReactNode[] = [];
  for (const row of visible) {
    const [from, to] = rowItems(row.index, columns, items.length);
    for (let i = from; i < to; i++)
      drawn.push(<Fragment key={itemKey(items[i]!)}>{renderItem(items[i]!, cell(i, i === from, row.index))}</Fragment>);
  }
  // The focused item, scrolled out of the drawn rows: kept, out of flow at its own place.
  const focusedRow = focused !== null && focused < items.length ? Math.floor(focused / columns) : null;
  if (
    focused !== null &&
    focusedRow !== null &&
    first &&
    last &&
    (focusedRow < first.index || focusedRow > last.index)
  ) {
    const at = virtualizer.measurementsCache[focusedRow];
    const { left, width } = cellBox(focused, columns, box.width, gap);
    const kept = renderItem(items[focused]!, {
      ...cell(focused, false, focusedRow),
      style: { position: 'absolute', top: (at?.start ?? 0) - margin, left, width },
    });
    const node = <Fragment key={itemKey(items[focused]!)}>{kept}</Fragment>;
    if (focusedRow < first.index) drawn.unshift(node);
    else drawn.push(node);
  }

  return (
    <ul
      ref={list}
      className={`${className} virtual-grid`}
      aria-label={label}
      style={style}
      onFocus={(e) => {
        const item = (e.target as Element).closest('[data-item]');
        if (item && e.currentTarget.contains(item)) setFocused(Number(item.getAttribute('data-item')));
      }}
      onBlur={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setFocused(null);
      }}
    >
      {drawn}
    </ul>
  );
}
