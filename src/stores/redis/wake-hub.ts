/**
 * Wake hints across processes over Redis pub/sub: a store publishes the queues that got ready
 * jobs on `<prefix>wake` and every store on the prefix hears them on its own subscriber
 * connection. A hint only: a lost message (a reconnect, a full output buffer) costs latency up to
 * the workers' poll interval, never a job. A process's own hints are delivered locally at once and
 * skipped when they come back from the server.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../core/logger.ts';
import { createWakeListeners, type WakeListener } from '../shared/wake-listeners.ts';

/** The wake side of one store. */
export interface WakeHub {
  /** Delivers `queues` to this process's listeners at once and publishes them to the others. */
  publish(queues: Iterable<string>): void;
  /**
   * Delivers `queues` to this process's listeners only: a script already published them (see
   * lib-keys.lua's publish_wake, whose message carries {@link WakeHub.origin}).
   */
  fireLocal(queues: readonly string[]): void;
  /** This hub's id in published messages: a process ignores its own. */
  readonly origin: string;
  subscribe(listener: WakeListener): () => void;
  close(): Promise<void>;
}

/** The channel of a prefix. */
export function wakeChannel(prefix: string): string {
  return `${prefix}wake`;
}

/**
 * Creates the hub; the subscriber connection (a duplicate of `redis`) is opened with the first
 * listener, so a store that only submits never holds a second connection.
 */
export function createWakeHub(redis: Redis, prefix: string, origin: string, logger: Logger): WakeHub {
  const listeners = createWakeListeners();
  const channel = wakeChannel(prefix);
  let subscriber: Redis | undefined;

  const listen = (): void => {
    if (subscriber !== undefined) return;
    // Subscribed on every 'ready' by this hub, not by ioredis's autoResubscribe: the SUBSCRIBE that
    // ioredis sends itself on a reconnect has no rejection handler, so a connection closed before
    // its reply (a close() right after redis-server came back) was an unhandled rejection.
    const sub = redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: false });
    sub.on('error', (err: Error) => logger.debug({ err: err.message }, 'redis wake connection error'));
    sub.on('ready', () => void sub.subscribe(channel).catch((err: unknown) => logger.debug({ err: String(err) }, 'redis wake subscribe failed')));
    sub.on('message', (_channel: string, message: string) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(message);
      } catch {
        return;
      }
      if (!Array.isArray(parsed) || parsed[0] === origin || !Array.isArray(parsed[1])) return;
      listeners.fire(parsed[1].filter((q): q is string => typeof q === 'string'));
    });
    subscriber = sub;
  };

  return {
    origin,
    fireLocal(queues) {
      if (queues.length > 0) listeners.fire(queues);
    },
    publish(queues) {
      const list = [...new Set(queues)];
      if (list.length === 0) return;
      listeners.fire(list);
      redis.publish(channel, JSON.stringify([origin, list])).catch(() => {});
    },
    subscribe(listener) {
      listen();
      return listeners.subscribe(listener);
    },
    async close() {
      listeners.clear();
      const sub = subscriber;
      subscriber = undefined;
      if (sub !== undefined) sub.disconnect();
    },
  };
}
