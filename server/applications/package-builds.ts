// The background queue that builds release packages in this process: one build at a time (each
// reads and deflates up to 250 MiB), each release once. What a build does is release-package.ts's;
// this file only schedules. Replicas each run their own queue: a package built twice is recorded once.
import type { Clock } from '../clock';
import type { Logger } from '../logger';

/** A package whose build failed is not tried again on demand before this pause (a broken release is not rebuilt per poll). */
export const PACKAGE_RETRY_AFTER_FAILURE_MS = 10 * 60_000;

export interface ReleaseRef {
  id: string;
  tenant_id: string;
}

export interface PackageBuilds {
  /** True while this release's package is queued or being built. */
  pending(releaseId: string): boolean;
  /** Queues the release's package: nothing while it is queued or building, or soon after its build failed. */
  request(release: ReleaseRef): void;
  /** Settles once every requested build has ended (tests, shutdown). */
  idle(): Promise<void>;
}

export class PackageBuildQueue implements PackageBuilds {
  private chain: Promise<void> = Promise.resolve();
  private readonly queued = new Set<string>();
  private readonly failedAt = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** Builds and records one release's package; resolves once it is stored (or not needed). */
    private readonly build: (release: ReleaseRef) => Promise<void>,
  ) {}

  pending(releaseId: string): boolean {
    return this.queued.has(releaseId);
  }

  request(release: ReleaseRef): void {
    if (this.queued.has(release.id)) return;
    const failed = this.failedAt.get(release.id);
    if (failed !== undefined && this.clock.now() - failed < PACKAGE_RETRY_AFTER_FAILURE_MS) return;
    this.queued.add(release.id);
    this.chain = this.chain
      .then(async () => {
        await this.build(release);
        this.failedAt.delete(release.id);
      })
      .catch((error) => {
        this.failedAt.set(release.id, this.clock.now());
        this.logger.error({ err: error, release_id: release.id }, 'release package could not be built');
      })
      .finally(() => this.queued.delete(release.id));
  }

  idle(): Promise<void> {
    return this.chain;
  }
}
