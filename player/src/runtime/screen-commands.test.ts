import { describe, expect, it } from 'vitest';
import {
  admitToast,
  dropStaleWaiting,
  shouldReboot,
  TOAST_QUEUE_MAX,
  TOAST_WAIT_MAX_MS,
  type ToastView,
} from './screen-commands';

const NOW = Date.parse('2026-11-23T10:00:00Z');
const toast = (id: string, expiresIn = 10_000): ToastView => ({
  id,
  level: 'info',
  text: `toast ${id}`,
  durationMs: 10_000,
  expiresAt: NOW + expiresIn,
});

describe('toast queue', () => {
  it('queues toasts in arrival order and ignores a repeat of the same toast', () => {
    let queue = admitToast([], toast('a'), NOW);
    queue = admitToast(queue, toast('b'), NOW);
    queue = admitToast(queue, toast('a'), NOW);
    expect(queue.map((t) => t.id)).toEqual(['a', 'b']);
  });

  it('does not show a toast that expired while the screen was offline', () => {
    expect(admitToast([], toast('late', -1), NOW)).toEqual([]);
  });

  // As the player does: when the toast on glass is done, it leaves the queue and the rest are judged.
  it('shows a short toast queued behind a longer one, though its expires_at passed while it waited', () => {
    // A 10 s toast on glass, then a 3 s one: its expires_at (send + 3 s) is long gone when its turn comes.
    let queue = admitToast([], toast('long'), NOW);
    queue = admitToast(queue, { ...toast('short', 3000), durationMs: 3000 }, NOW + 100);
    expect(dropStaleWaiting(queue.slice(1), NOW + 10_000).map((t) => t.id)).toEqual(['short']);
  });

  it('drops waiting toasts that could not start within a minute of arriving', () => {
    let queue = admitToast([], toast('shown'), NOW);
    queue = admitToast(queue, toast('stale'), NOW);
    queue = admitToast(queue, toast('fresh', 40_000), NOW + 30_000);
    expect(dropStaleWaiting(queue.slice(1), NOW + TOAST_WAIT_MAX_MS).map((t) => t.id)).toEqual(['fresh']);
  });

  it('drops the next toast in line too when it waited over a minute (two long toasts went before it)', () => {
    const long = (id: string) => ({ ...toast(id, 60_000), durationMs: 60_000 });
    let queue = admitToast([], long('first'), NOW);
    queue = admitToast(queue, long('second'), NOW + 1000);
    queue = admitToast(queue, long('third'), NOW + 59_000);
    // 'first' is done: 'second' (waited 59 s) and 'third' (1 s) may still start.
    queue = dropStaleWaiting(queue.slice(1), NOW + 60_000);
    expect(queue.map((t) => t.id)).toEqual(['second', 'third']);
    // 'second' is done: 'third' waited 61 s and would start two minutes after it was sent.
    expect(dropStaleWaiting(queue.slice(1), NOW + 120_000)).toEqual([]);
  });

  it('keeps the queue bounded, keeping the toast on glass', () => {
    let queue: ToastView[] = [];
    for (let i = 0; i < TOAST_QUEUE_MAX + 5; i++) queue = admitToast(queue, toast(`t${i}`), NOW);
    expect(queue).toHaveLength(TOAST_QUEUE_MAX);
    expect(queue[0]!.id).toBe('t0');
    expect(queue.at(-1)!.id).toBe(`t${TOAST_QUEUE_MAX + 4}`);
  });
});

describe('reboot rule', () => {
  const reboot = { reboot_id: 'rbt_1', expires_at: new Date(NOW + 60_000).toISOString() };
  it('acts on a fresh reboot once', () => {
    expect(shouldReboot(reboot, NOW, null)).toBe(true);
    expect(shouldReboot(reboot, NOW, 'rbt_1')).toBe(false);
  });
  it('ignores a reboot that expired while the screen was offline', () => {
    expect(shouldReboot(reboot, NOW + 60_000, null)).toBe(false);
  });
});
