import sharp from 'sharp';
import { describe, expect, it, vi } from 'vitest';
import {
  decide,
  initialState,
  isBlank,
  observeBlank,
  observeHeartbeat,
  recovered,
  WATCHDOG_LIMITS as L,
  Watchdog,
  type RendererControl,
} from './watchdog';

const T0 = 1_000_000;

describe('watchdog decisions', () => {
  it('gives a starting renderer its grace, then calls a renderer without frames hung', () => {
    const s = initialState(T0);
    expect(decide(s, T0 + L.startGraceMs - 1)).toEqual({ kind: 'none' });
    expect(decide(s, T0 + L.startGraceMs + 1)).toEqual({ kind: 'reload', reason: 'hang' });
  });

  it('keeps a renderer whose frames move, and reloads one whose frames stopped', () => {
    const s = initialState(T0);
    for (let t = 1000; t <= 60_000; t += 1000) observeHeartbeat(s, t / 1000, T0 + t);
    expect(decide(s, T0 + 60_000)).toEqual({ kind: 'none' });
    // Heartbeats keep coming (the page's timers run) but no frame is drawn any more.
    for (let t = 61_000; t <= 60_000 + L.hangAfterMs; t += 1000) observeHeartbeat(s, 60, T0 + t);
    expect(decide(s, T0 + 60_000 + L.hangAfterMs)).toEqual({ kind: 'none' });
    expect(decide(s, T0 + 60_000 + L.hangAfterMs + 1001)).toEqual({ kind: 'reload', reason: 'hang' });
  });

  it('restarts a crashed renderer before anything else', () => {
    const s = initialState(T0);
    s.crashed = true;
    s.blankRun = L.blankSamples;
    expect(decide(s, T0 + 1)).toEqual({ kind: 'restart', reason: 'crash' });
  });

  it('reloads on blank glass only after consecutive blank samples', () => {
    const s = initialState(T0);
    observeHeartbeat(s, 5, T0 + 1000);
    observeBlank(s, true);
    observeBlank(s, true);
    observeBlank(s, false); // content came back: the run starts over
    observeBlank(s, true);
    observeBlank(s, true);
    expect(decide(s, T0 + 2000)).toEqual({ kind: 'none' });
    observeBlank(s, true);
    expect(decide(s, T0 + 2000)).toEqual({ kind: 'reload', reason: 'blank' });
  });

  it('backs off between recoveries, doubling, and starts over after a stable spell', () => {
    const s = initialState(T0);
    let now = T0 + L.startGraceMs + 1;
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      // A renderer that never draws: find when the watchdog acts next.
      let t = now;
      while (decide(s, t).kind === 'none') t += 500;
      waits.push(t - now);
      recovered(s, t);
      now = t;
    }
    // Each wait is the backoff or the new renderer's grace, whichever is longer, and never more than the cap allows.
    expect(waits[1]).toBeGreaterThanOrEqual(L.startGraceMs);
    expect(s.backoffMs).toBe(L.backoffMaxMs);
    expect(waits.at(-1)).toBeGreaterThanOrEqual(L.backoffMaxMs);
    // Healthy long enough after the last recovery: the backoff is back to its start.
    observeHeartbeat(s, 1, now + 1000);
    for (let t = now + 2000; t < now + L.stableAfterMs + 2000; t += 1000) observeHeartbeat(s, t, t);
    expect(decide(s, now + L.stableAfterMs + 2000)).toEqual({ kind: 'none' });
    expect(s.backoffMs).toBe(L.backoffInitialMs);
  });
});

describe('the watchdog', () => {
  function control(frame?: Buffer) {
    const calls: string[] = [];
    const c: RendererControl = {
      reload: async () => void calls.push('reload'),
      restart: async () => void calls.push('restart'),
      ...(frame ? { capture: async () => frame } : {}),
    };
    return { calls, c };
  }

  it('neither acts nor counts a recovery while no renderer is there (a browser it did not start was closed)', async () => {
    let now = T0;
    let present = true;
    const { calls, c } = control();
    const recoveries: string[] = [];
    const dog = new Watchdog({
      control: { ...c, present: () => present },
      onRecovery: (reason, action) => recoveries.push(`${action}:${reason}`),
      contentExpected: () => true,
      now: () => now,
    });
    dog.heartbeat(1);
    present = false;
    for (let i = 0; i < 60; i++) {
      now += 60_000;
      await dog.tick();
    }
    expect(calls).toEqual([]);
    expect(recoveries).toEqual([]);
    // A renderer comes back: it has its start grace, then a hang counts again.
    present = true;
    now += L.startGraceMs - 1000;
    await dog.tick();
    expect(recoveries).toEqual([]);
    now += 2000;
    await dog.tick();
    expect(recoveries).toEqual(['reload:hang']);
  });

  it('runs on a monotonic clock: a wall clock set right at boot (NTP, no RTC) is no hang', async () => {
    const { calls, c } = control();
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      const dog = new Watchdog({ control: c, onRecovery: () => undefined, contentExpected: () => true });
      dog.heartbeat(1);
      // A Raspberry Pi boots on the time it saved at shutdown; hours later NTP steps it forward,
      // between two heartbeats of a renderer that draws all along. Stepped back, it is no pause.
      vi.setSystemTime(Date.now() + 6 * 3600_000);
      expect(await dog.tick()).toEqual({ kind: 'none' });
      dog.heartbeat(2);
      vi.setSystemTime(Date.now() - 12 * 3600_000);
      expect(await dog.tick()).toEqual({ kind: 'none' });
    } finally {
      vi.useRealTimers();
    }
    expect(calls).toEqual([]);
  });

  it('acts through the shell and counts each recovery', async () => {
    let now = T0;
    const { calls, c } = control();
    const recoveries: string[] = [];
    const dog = new Watchdog({
      control: c,
      onRecovery: (reason, action) => recoveries.push(`${action}:${reason}`),
      contentExpected: () => true,
      now: () => now,
    });
    dog.heartbeat(1);
    now += L.hangAfterMs + 1000;
    await dog.tick();
    dog.rendererExited();
    now += L.backoffMaxMs;
    await dog.tick();
    expect(calls).toEqual(['reload', 'restart']);
    expect(recoveries).toEqual(['reload:hang', 'restart:crash']);
  });

  it('samples glass only while content should be on it', async () => {
    const black = await sharp({ create: { width: 64, height: 36, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    let expected = false;
    const { c } = control(black);
    const dog = new Watchdog({ control: c, onRecovery: () => undefined, contentExpected: () => expected });
    await dog.sample();
    expect(dog.state.blankRun).toBe(0);
    expected = true;
    await dog.sample();
    await dog.sample();
    expect(dog.state.blankRun).toBe(2);
  });
});

describe('blank glass', () => {
  it('is a frame of one colour; any content is not blank', async () => {
    const plain = (background: string) =>
      sharp({ create: { width: 160, height: 90, channels: 3, background } })
        .png()
        .toBuffer();
    expect(await isBlank(await plain('#000000'))).toBe(true);
    expect(await isBlank(await plain('#ffffff'))).toBe(true);
    const text = await sharp({ create: { width: 160, height: 90, channels: 3, background: '#000' } })
      .composite([
        {
          input: Buffer.from(
            '<svg width="160" height="90"><text x="10" y="50" fill="#fff" font-size="30">Menu</text></svg>',
          ),
        },
      ])
      .png()
      .toBuffer();
    expect(await isBlank(text)).toBe(false);
  });
});
