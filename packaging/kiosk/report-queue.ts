// Reports (activations now, proof of play later) wait in SQLite until upstream takes them, in the
// order they were made: the queue survives restarts and power cuts, is bounded (the oldest go
// first when a screen is offline for very long), and is replayed head first, stopping at the
// first report upstream cannot take yet.
import type { RuntimeReport } from '../../sdk/contract/runtime';
import { MarqueeProblem } from '../../sdk/client/problem';
import type { AgentDb } from './agent-db';

/** Reports kept while upstream is away; at a report a minute that is about a week. */
export const REPORT_QUEUE_MAX = 10_000;

/** Statuses a later attempt may turn into an acceptance (the session lapsed, a budget, the server). */
const RETRYABLE = new Set([401, 408, 409, 425, 429]);

export class ReportQueue {
  constructor(
    private readonly db: AgentDb,
    private readonly now: () => number = Date.now,
  ) {}

  enqueue(report: RuntimeReport): void {
    this.db.transaction(() => {
      this.db
        .prepare('INSERT INTO report_queue (body, queued_at) VALUES (?, ?)')
        .run(JSON.stringify(report), this.now());
      const { n } = this.db.prepare('SELECT COUNT(*) AS n FROM report_queue').get() as { n: number };
      if (n > REPORT_QUEUE_MAX)
        this.db
          .prepare('DELETE FROM report_queue WHERE seq IN (SELECT seq FROM report_queue ORDER BY seq LIMIT ?)')
          .run(n - REPORT_QUEUE_MAX);
    });
  }

  /** Forgets every queued report (the screen they are about is gone). */
  clear(): void {
    this.db.prepare('DELETE FROM report_queue').run();
  }

  size(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM report_queue').get() as { n: number }).n;
  }

  /**
   * Sends queued reports in order until the queue is empty or one cannot be sent yet. A report
   * upstream refuses for good (a 4xx that no retry changes) is dropped so it cannot block the rest.
   */
  async replay(send: (report: RuntimeReport) => Promise<void>): Promise<{ sent: number; dropped: number }> {
    let sent = 0;
    let dropped = 0;
    for (;;) {
      const head = this.db.prepare('SELECT seq, body FROM report_queue ORDER BY seq LIMIT 1').get() as
        | { seq: number; body: string }
        | undefined;
      if (!head) return { sent, dropped };
      try {
        await send(JSON.parse(head.body) as RuntimeReport);
        sent++;
      } catch (error) {
        const refusedForGood =
          error instanceof MarqueeProblem && error.status >= 400 && error.status < 500 && !RETRYABLE.has(error.status);
        if (!refusedForGood) {
          this.db.prepare('UPDATE report_queue SET attempts = attempts + 1 WHERE seq = ?').run(head.seq);
          throw error;
        }
        dropped++;
      }
      this.db.prepare('DELETE FROM report_queue WHERE seq = ?').run(head.seq);
    }
  }
}
