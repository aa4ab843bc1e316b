/**
 * The `onWake` listeners of one store instance and how hints reach them. A wake is a latency
 * hint only (workers poll as well; correctness comes from claims and lease expiry), so delivery
 * is best effort: listeners run in a microtask — a listener that calls back into the store never
 * runs inside the operation that woke it, nor sees it half done — and a throwing listener is
 * ignored. Where the hints come from (an operation's commit, LISTEN/NOTIFY) is each store's own.
 *
 * Pure TypeScript with no driver import.
 */

/** Called with a queue that may have jobs ready now. */
export type WakeListener = (queue: string) => void;

/** The registered listeners of one store (see {@link createWakeListeners}). */
export interface WakeListeners {
  /** Registers `listener`; returns its unsubscribe function. */
  subscribe(listener: WakeListener): () => void;
  /**
   * Calls every listener registered now once per queue of `queues`, in a microtask. Both are
   * copied before returning, so the caller may clear its own collection right after.
   */
  fire(queues: Iterable<string>): void;
  /** Drops every listener (on close). */
  clear(): void;
}

/** Creates an empty listener set; see the module comment for the delivery rules. */
export function createWakeListeners(): WakeListeners {
  const listeners = new Set<WakeListener>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    fire(queues) {
      if (listeners.size === 0) return;
      const targets = [...listeners];
      const woken = [...queues];
      if (woken.length === 0) return;
      queueMicrotask(() => deliver(woken, targets));
    },
    clear() {
      listeners.clear();
    },
  };
}

function deliver(queues: readonly string[], targets: readonly WakeListener[]): void {
  for (const queue of queues) {
    for (const listener of targets) {
      try {
        listener(queue);
      } catch {
        // Correctness never depends on a wake: workers poll as well.
      }
    }
  }
}
