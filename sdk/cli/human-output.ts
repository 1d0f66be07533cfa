// Human output: blocks laid out for a terminal (columns measured in display cells, so wide
// characters line up), every server value made safe first. Loaded only when a person reads the
// output: a --json run never pays for it.
import stringWidth from 'string-width';
import { echo } from '../contract/untrusted-text';
import { shown, type Block, type Value } from './output';

/** The widest a table cell grows before it is cut with an ellipsis. */
const CELL_MAX_CHARACTERS = 48;

function cell(value: Value): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return echo(String(value), CELL_MAX_CHARACTERS);
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - stringWidth(text)));
}

export function renderBlocks(blocks: Block[]): string {
  const out: string[] = [];
  for (const block of blocks) {
    if (out.length > 0) out.push('');
    if (block.kind === 'lines') out.push(...block.lines.map(shown));
    else if (block.kind === 'fields') {
      const width = Math.max(...block.fields.map(([label]) => stringWidth(label)));
      for (const [label, value] of block.fields) out.push(`${pad(`${label}:`, width + 1)} ${shown(value)}`);
    } else if (block.rows.length === 0) out.push(block.empty ?? '(none)');
    else {
      // The last column needs no alignment after it, so it is shown whole.
      const rows = block.rows.map((row) => row.map((value, i) => (i === row.length - 1 ? shown(value) : cell(value))));
      const widths = block.columns.map((title, i) =>
        Math.max(stringWidth(title), ...rows.map((r) => stringWidth(r[i] ?? ''))),
      );
      const line = (cells: string[]) =>
        cells
          .map((c, i) => (i === cells.length - 1 ? c : pad(c, widths[i]!)))
          .join('  ')
          .trimEnd();
      out.push(line(block.columns.map((c) => c.toUpperCase())), ...rows.map(line));
    }
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}
