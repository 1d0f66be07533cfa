// Periodic maintenance (pruning expired records, retention) registered by the features that own it.
import type { Logger } from './logger';

interface Job {
  name: string;
  everyMs: number;
  run: () => Promise<void>;
  timer?: NodeJS.Timeout;
  running?: boolean;
}

export class Housekeeping {
  private readonly jobs: Job[] = [];
  private started = false;

  constructor(private readonly logger: Logger) {}

  every(name: string, everyMs: number, run: () => Promise<void>): void {
    const job: Job = { name, everyMs, run };
    this.jobs.push(job);
    if (this.started) this.schedule(job);
  }

  start(): void {
    this.started = true;
    for (const job of this.jobs) this.schedule(job);
  }

  /** Runs every job once now (tests, and start-up catch-up). */
  async runAll(): Promise<void> {
    for (const job of this.jobs) await this.runJob(job);
  }

  stop(): void {
    this.started = false;
    for (const job of this.jobs) clearInterval(job.timer);
  }

  private schedule(job: Job): void {
    job.timer = setInterval(() => void this.runJob(job), job.everyMs);
    job.timer.unref();
  }

  private async runJob(job: Job): Promise<void> {
    if (job.running) return;
    job.running = true;
    try {
      await job.run();
    } catch (error) {
      this.logger.error({ job: job.name, err: error }, 'housekeeping job failed');
    } finally {
      job.running = false;
    }
  }
}
