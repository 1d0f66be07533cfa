// A pino logger whose lines a test reads back.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../logger';

export function capturedLogs(level = 'info'): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const logger = createLogger(
    level,
    new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    }) as never,
  );
  return { lines, logger };
}
