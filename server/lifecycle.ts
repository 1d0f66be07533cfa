// Start-up, readiness and draining state shared by the HTTP layer and main.

export type LifecycleState = 'starting' | 'ready' | 'draining';

export class Lifecycle {
  state: LifecycleState = 'starting';
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private readonly closers = new Set<() => void>();

  requestStarted(): void {
    this.inFlight++;
  }

  requestFinished(): void {
    this.inFlight--;
    if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Long-lived responses (SSE) register how to end themselves when draining. */
  onDrain(close: () => void): () => void {
    this.closers.add(close);
    return () => this.closers.delete(close);
  }

  /** Stops taking new work, ends streams, and resolves once in-flight requests finished. */
  async drain(timeoutMs: number): Promise<void> {
    this.state = 'draining';
    for (const close of [...this.closers]) close();
    if (this.inFlight === 0) return;
    await Promise.race([
      new Promise<void>((resolve) => this.idle.push(resolve)),
      new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
    ]);
  }

  /** Long-lived responses registered with onDrain now (tests: none outlives its client). */
  get openStreams(): number {
    return this.closers.size;
  }

  get activeRequests(): number {
    return this.inFlight;
  }
}
