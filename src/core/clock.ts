/**
 * Time is injected everywhere in core and engine: no `Date.now()` or bare `setTimeout` there.
 * Production uses {@link systemClock}; tests use {@link createFakeClock} and advance it by hand.
 */

/** Cancels a timer created by {@link Clock.setTimer}. */
export type CancelTimer = () => void;

/** A source of time and timers. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds, unless cancelled. */
  setTimer(fn: () => void, ms: number): CancelTimer;
  /**
   * Resolves after `ms` milliseconds, or early (without rejecting) when `signal` aborts.
   * `sleep(0)` yields: to the event loop once on the real clock, at once on a fake one.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * What to abort a sleep's signal with to wake it early: a plain value, since `abort()` without a
 * reason builds a DOMException, stack trace and all, on every wake.
 */
export const WAKE_REASON = 'woken';

function sleepWith(clock: Pick<Clock, 'setTimer'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve();
    const done = (): void => {
      cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const cancel = clock.setTimer(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The real clock. Timers keep the process alive (a running worker must), so whoever starts
 * work must stop it (`worker.stop()`), which cancels them.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(t);
  },
  sleep(ms, signal) {
    if (ms <= 0 && !signal?.aborted) return new Promise((resolve) => setImmediate(resolve));
    return sleepWith(systemClock, ms, signal);
  },
};

/** A clock that only moves when told to. */
export interface FakeClock extends Clock {
  /** Moves time forward, firing due timers in order; awaits microtasks between timers. */
  advance(ms: number): Promise<void>;
  /** Sets the time (never backwards). */
  set(epochMs: number): void;
  /** Number of timers waiting. */
  pendingTimers(): number;
}

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Drains pending promise callbacks so code woken by a timer can run before the next one fires. */
async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

/** Creates a {@link FakeClock} starting at `startMs` (default 2026-01-01T00:00:00Z). */
export function createFakeClock(startMs = Date.UTC(2026, 0, 1)): FakeClock {
  let now = startMs;
  let seq = 0;
  const timers: FakeTimer[] = [];
  const clock: FakeClock = {
    now: () => now,
    setTimer(fn, ms) {
      const timer: FakeTimer = { at: now + Math.max(0, ms), seq: seq++, fn };
      timers.push(timer);
      return () => {
        const i = timers.indexOf(timer);
        if (i >= 0) timers.splice(i, 1);
      };
    },
    sleep(ms, signal) {
      return sleepWith(clock, ms, signal);
    },
    async advance(ms) {
      const target = now + ms;
      await flushMicrotasks();
      for (;;) {
        timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
        const next = timers[0];
        if (!next || next.at > target) break;
        timers.shift();
        now = Math.max(now, next.at);
        next.fn();
        await flushMicrotasks();
      }
      now = target;
      await flushMicrotasks();
    },
    set(epochMs) {
      now = Math.max(now, epochMs);
    },
    pendingTimers: () => timers.length,
  };
  return clock;
}
