// A progress line on stderr for uploads and waits (server text in it, such as an operation's
// state, is escaped like all output): redrawn in place on a terminal, or (forced with
// --progress when stderr is not one) a plain line at each quarter. A few lines of our own: a
// library would bring more than one bar on one stream needs.
import type { UploadProgress } from '../client/marquee-client';
import { escapeUnsafe } from '../contract/untrusted-text';
import { formatBytes } from './output';

/** Redraws at most this often, so a fast upload does not spend its time painting. */
const REDRAW_INTERVAL_MS = 100;
const BAR_WIDTH = 24;

export interface Progress {
  /** Bytes sent so far; the server's operation state while it processes. */
  update(progress: UploadProgress): void;
  /** Replaces the line with a short note ("waiting for the operation …"). */
  stage(text: string): void;
  /** Clears the line (on a terminal) before the result or an error is printed. */
  done(): void;
}

export const silentProgress: Progress = { update: () => undefined, stage: () => undefined, done: () => undefined };

export function progressLine(label: string, sent: number, total: number | undefined): string {
  if (!total) return `${label} ${formatBytes(sent)}`;
  const fraction = Math.min(1, sent / total);
  const filled = Math.round(fraction * BAR_WIDTH);
  const bar = `${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}`;
  return `${label} [${bar}] ${String(Math.floor(fraction * 100)).padStart(3)}% ${formatBytes(sent)} of ${formatBytes(total)}`;
}

export function createProgress(stream: NodeJS.WriteStream, label: string, interactive: boolean): Progress {
  let lastDraw = 0;
  let lastQuarter = -1;
  let drawn = false;
  let lastStage = '';
  const draw = (text: string, force: boolean) => {
    if (interactive) {
      const now = Date.now();
      if (!force && now - lastDraw < REDRAW_INTERVAL_MS) return;
      lastDraw = now;
      const columns = stream.columns ?? 80;
      stream.write(`\r\x1b[2K${escapeUnsafe(text).slice(0, Math.max(10, columns - 1))}`);
      drawn = true;
    } else stream.write(`${escapeUnsafe(text)}\n`);
  };
  return {
    update({ stage, sent, total, operation }) {
      if (stage === 'processing') {
        const text = `${label}: ${operation ? `operation ${operation.id} ${operation.state}` : 'processing'}`;
        if (text !== lastStage) draw(text, true);
        lastStage = text;
        return;
      }
      if (interactive) return draw(progressLine(label, sent, total), sent === total);
      // Not a terminal: one line per quarter, so a log shows the upload moving without flooding it.
      const quarter = total ? Math.floor((Math.min(sent, total) / total) * 4) : 0;
      if (quarter > lastQuarter) {
        lastQuarter = quarter;
        draw(progressLine(label, sent, total), true);
      }
    },
    stage(text) {
      lastStage = text;
      draw(`${label}: ${text}`, true);
    },
    done() {
      if (interactive && drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
