/**
 * Wake hints (`onWake`): a latency hint only — workers also poll, and correctness comes from
 * claims and lease expiry. Hints reach listeners two ways:
 * - in this process, right after the transaction that made jobs ready commits;
 * - from other processes, through LISTEN on the schema's channel (the NOTIFY is sent inside that
 *   same transaction, so it is delivered only if it commits). Notifications sent by this
 *   store's own pool connections are skipped: they were delivered locally already.
 * The LISTEN connection opens on the first subscription, so a store nobody listens to holds no
 * extra connection.
 */
import type pg from 'pg';
import type { Logger } from '../../core/logger.ts';
import { createWakeListeners, type WakeListener } from '../shared/wake-listeners.ts';
import { createListenConnection, type ListenConnection } from './listen-connection.ts';

/** Queues remembered for the catch-up wake after a reconnect; more are not tracked. */
const MAX_REMEMBERED_QUEUES = 1_000;

/** Options of {@link createWakeHub}. */
export interface WakeHubOptions {
  config: pg.ClientConfig;
  channel: string;
  /** Server pids of this store's pool connections. */
  ownPids: ReadonlySet<number>;
  logger: Logger;
}

/** Fan-out of wake hints to this store's listeners. */
export interface WakeHub {
  /** Registers a listener; returns its unsubscribe function. */
  subscribe(listener: WakeListener): () => void;
  /** Delivers hints for queues this process just made ready (after the commit). */
  deliverLocal(queues: Iterable<string>): void;
  /** Drops every listener and closes the LISTEN connection. */
  close(): Promise<void>;
}

/** Creates the hub; see the module comment. */
export function createWakeHub(options: WakeHubOptions): WakeHub {
  const listeners = createWakeListeners();
  const remembered = new Set<string>();
  let connection: ListenConnection | undefined;
  let closed = false;

  const remember = (queue: string): void => {
    if (remembered.size < MAX_REMEMBERED_QUEUES) remembered.add(queue);
  };

  const listen = (): void => {
    connection = createListenConnection({
      config: options.config,
      channel: options.channel,
      logger: options.logger,
      onNotification(queue, senderPid) {
        if (options.ownPids.has(senderPid)) return;
        remember(queue);
        listeners.fire([queue]);
      },
      // Hints sent while the connection was down are lost: wake every queue seen so far once.
      onReconnect: () => listeners.fire(remembered),
    });
    connection.start();
  };

  return {
    subscribe(listener) {
      const unsubscribe = listeners.subscribe(listener);
      if (!connection && !closed) listen();
      return unsubscribe;
    },
    deliverLocal(queues) {
      const unique = [...new Set(queues)];
      unique.forEach(remember);
      listeners.fire(unique);
    },
    async close() {
      closed = true;
      listeners.clear();
      await connection?.close();
    },
  };
}
