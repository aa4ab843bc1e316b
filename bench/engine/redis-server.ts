/**
 * A private, throw-away redis-server for the BullMQ comparison: its own port on 127.0.0.1,
 * persistence off (no RDB snapshots, no AOF), so BullMQ gets redis's fastest setting.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from '../../test/support/free-port.ts';

/** The binary the benchmark looks for. */
export const REDIS_SERVER_BIN = '/usr/bin/redis-server';
const READY_TIMEOUT_MS = 10_000;

/** A running private redis. */
export interface RedisServer {
  port: number;
  pid: number;
  /** Kills the server (SIGTERM, then SIGKILL after 2 s); safe to call twice. */
  stop(): Promise<void>;
}

/** Resolves the redis-server binary: the fixed path, else PATH; undefined if absent. */
export function findRedisServer(): string | undefined {
  if (existsSync(REDIS_SERVER_BIN)) return REDIS_SERVER_BIN;
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    if (dir && existsSync(`${dir}/redis-server`)) return `${dir}/redis-server`;
  }
  return undefined;
}


/** One PING over a raw socket; true on +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  return () => {
    stopped ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const force = setTimeout(() => child.kill('SIGKILL'), 2_000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
    return stopped;
  };
}

/** Starts redis-server on a free port and waits for PING; kills it if it never answers. */
export async function startRedisServer(binary: string): Promise<RedisServer> {
  const port = await freePort();
  const child = spawn(binary, ['--save', '', '--appendonly', 'no', '--port', String(port), '--bind', '127.0.0.1'], { stdio: 'ignore' });
  const stop = stopper(child);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await ping(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server on port ${port} did not answer PING (exit code ${child.exitCode})`);
    }
    await delay(20);
  }
  if (child.pid === undefined) throw new Error('redis-server has no pid');
  return { port, pid: child.pid, stop };
}
