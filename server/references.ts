// What content is referenced from where. Applications and media ask before deleting; playlists
// re-resolve when media or applications change. Playlists and manifests provide the real answers
// (installed at start-up); until a feature that references content is installed, nothing does.
import type { Work } from './store/store';

export interface MediaChange {
  mediaId: string;
  /** Tags before and after (either may be null): selectors on any of them re-resolve. */
  tags: (string | null)[];
}

/**
 * The in-use questions are asked by a delete that holds the content's references lock, in its
 * transaction: the answer holds the references lock of every playlist that names the content, so a
 * screen reference to one of them being written commits before the look (and the answer is true),
 * or waits for the delete and finds the playlist unavailable.
 */
export interface ContentReferences {
  /** True while a live manifest references a release of the application (delete → application_in_use). */
  applicationInUse(work: Work, tenantId: string, applicationId: string): Promise<boolean>;
  /** True while desired or active grants reference the media (delete is refused). */
  mediaInUse(work: Work, tenantId: string, mediaId: string): Promise<boolean>;
  /**
   * Called in the transaction that changes a media's tag, readiness or existence, which holds
   * mediaSelectionLock(tenantId) from before its first event.
   */
  mediaChanged(work: Work, tenantId: string, change: MediaChange, now: number): Promise<void>;
  /** Called in the transaction in which releases of the application stop being ready (its delete). */
  applicationChanged(work: Work, tenantId: string, applicationId: string, now: number): Promise<void>;
}

/**
 * The lock a playlist write takes for each media and application it names, and the item's delete
 * before it looks for references: the write reads the item as ready, the delete reads the write's
 * dependency rows, and neither would see the other's uncommitted row on an engine that runs them
 * side by side.
 */
export const contentReferencesLock = (kind: 'media' | 'application', id: string) => `content-references:${kind}:${id}`;

/**
 * The lock a playlist write with a `tag` or `all` selector takes (it cannot know which media it
 * will name until it reads them all), and every media change of the project that re-resolves such
 * selectors (delete, retag, becoming ready), each before its transaction's first event (the
 * project's event lock is taken after it, never before).
 */
export const mediaSelectionLock = (tenantId: string) => `media-selection:${tenantId}`;

export const noReferences: ContentReferences = {
  applicationInUse: async () => false,
  mediaInUse: async () => false,
  mediaChanged: async () => undefined,
  applicationChanged: async () => undefined,
};
