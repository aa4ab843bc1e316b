/**
 * The dedicated connection that LISTENs on the schema's wake channel. It is not from the pool
 * (a LISTEN belongs to one session for as long as it lives) and it reconnects by itself, with
 * exponential backoff and jitter, whenever the connection is lost or cannot be made.
 */
import pg from 'pg';
import type { Logger } from '../../core/logger.ts';
import { quoteIdentifier } from './identifiers.ts';

/** First reconnect delay; doubles per failed attempt up to {@link MAX_RECONNECT_DELAY_MS}. */
export const BASE_RECONNECT_DELAY_MS = 100;
/** Longest wait between reconnect attempts. */
export const MAX_RECONNECT_DELAY_MS = 5_000;

/** Options of {@link createListenConnection}. */
export interface ListenConnectionOptions {
  config: pg.ClientConfig;
  channel: string;
  logger: Logger;
  /** A notification arrived: its payload (a queue name) and the server pid that sent it. */
  onNotification(payload: string, senderPid: number): void;
  /** Listening again after a loss: notifications sent meanwhile were missed. */
  onReconnect(): void;
}

/** A self-healing LISTEN session. */
export interface ListenConnection {
  /** Connects and listens (once; later calls do nothing). */
  start(): void;
  /** Stops for good; resolves when the connection is closed. */
  close(): Promise<void>;
}

/** Delay before reconnect attempt `failures + 1`: exponential, capped, half of it jittered. */
export function reconnectDelayMs(failures: number): number {
  const ceiling = Math.min(MAX_RECONNECT_DELAY_MS, BASE_RECONNECT_DELAY_MS * 2 ** Math.min(failures, 16));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Ends a client quietly: it is being dropped, its errors no longer matter. */
function discard(client: pg.Client): void {
  client.removeAllListeners('notification');
  client.removeAllListeners('end');
  client.removeAllListeners('error');
  client.on('error', () => {});
  client.end().catch(() => {});
}

/** Creates the LISTEN connection; nothing happens before `start()`. */
export function createListenConnection(options: ListenConnectionOptions): ListenConnection {
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  let closed = false;
  let failures = 0;
  let listenedBefore = false;

  const lost = (lostClient: pg.Client, err: unknown): void => {
    if (client !== lostClient) return; // already handled (error and end both fire)
    client = undefined;
    discard(lostClient);
    if (closed) return;
    const delayMs = reconnectDelayMs(failures);
    failures += 1;
    const reason = err instanceof Error ? err.message : 'connection ended';
    options.logger.warn({ channel: options.channel, err: reason, retryInMs: Math.round(delayMs) }, 'postgres: LISTEN connection lost; reconnecting');
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, delayMs);
    // Waiting to reconnect must not keep an otherwise finished process alive.
    timer.unref();
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const next = new pg.Client(options.config);
    client = next;
    next.on('error', (err) => lost(next, err));
    next.on('end', () => lost(next, undefined));
    next.on('notification', (message) => {
      if (message.channel === options.channel && message.payload) options.onNotification(message.payload, message.processId);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${quoteIdentifier(options.channel)}`);
    } catch (err) {
      lost(next, err);
      return;
    }
    if (client !== next) return;
    failures = 0;
    if (listenedBefore) options.onReconnect();
    listenedBefore = true;
  };

  return {
    start() {
      if (started || closed) return;
      started = true;
      void connect();
    },
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      const current = client;
      client = undefined;
      if (!current) return;
      current.removeAllListeners('end');
      current.removeAllListeners('error');
      current.on('error', () => {});
      await current.end().catch(() => {});
    },
  };
}
