/**
 * Starts the fastify hello-world baseline (fastify-hello.ts) as its own process on 127.0.0.1.
 */
import { fileURLToPath } from 'node:url';
import { freePort } from '../../test/e2e/kiln-process.ts';
import { spawnServerChild, type ServerChild } from './server-child.ts';

const SCRIPT = fileURLToPath(new URL('./fastify-hello.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const READY_TIMEOUT_MS = 15_000;

/** A running hello-world server. */
export interface FastifyHello {
  server: ServerChild;
  /** The hello-world route. */
  url: string;
  /** Stops the process (by PID). */
  close(): Promise<void>;
}

/** Spawns the server and waits until `GET /` answers. */
export async function startFastifyHello(): Promise<FastifyHello> {
  const port = await freePort();
  const server = spawnServerChild(['--import', 'tsx', SCRIPT, String(port)], REPO_ROOT, process.env);
  const url = `http://127.0.0.1:${port}/`;
  const close = async (): Promise<void> => void (await server.stop());
  try {
    await server.waitReady(url, READY_TIMEOUT_MS);
    return { server, url, close };
  } catch (err) {
    await close();
    throw err;
  }
}
