/**
 * Real `kiln serve` processes for the QR end-to-end tests: start one on a free port and wait until
 * it answers, and read counters back from the `/metrics` of one or more of them.
 */
import { freePort, spawnKiln, waitUntil, type KilnProcess } from './kiln-process.ts';

/** Start-up of a tsx-loaded process on a busy 2-core machine takes a few seconds; this bounds a hung one. */
const SERVE_READY_TIMEOUT_MS = 20_000;

/** A running `kiln serve` and its base URL. */
export interface ServeProcess {
  proc: KilnProcess;
  /** `http://127.0.0.1:<port>` */
  base: string;
}

/**
 * Spawns `kiln serve --port <free port> <args>` in `dir` and waits until `/healthz` answers 200.
 * The port is chosen here rather than `--port 0` so the tests can run with logs at `warn` (the
 * "serving on" line is an info log).
 */
export async function startServe(args: readonly string[], dir: string, env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const port = await freePort();
  const proc = spawnKiln(['serve', '--port', String(port), ...args], dir, env);
  const base = `http://127.0.0.1:${port}`;
  await waitUntil('kiln serve to answer /healthz', async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), SERVE_READY_TIMEOUT_MS, 100).catch(
    (err: unknown) => {
      throw new Error(`${String(err)}\n--- serve output ---\n${proc.output()}`);
    },
  );
  return { proc, base };
}

/** `name="value"` pairs of one sample's label set (Prometheus text format escapes `\\`, `\"`, `\n`). */
function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const match of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
    labels[match[1] ?? ''] = (match[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/**
 * Sum of every sample of the counter `name` in a Prometheus text exposition whose labels include
 * all of `labels` (other labels, e.g. `outcome`, are summed over).
 */
export function sumMetric(exposition: string, name: string, labels: Readonly<Record<string, string>>): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    const sample = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample || sample[1] !== name) continue;
    const have = parseLabels(sample[2] ?? '');
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(sample[3]);
  }
  return sum;
}

/** {@link sumMetric} over the `/metrics` of every server in `bases` (each process counts only its own work). */
export async function scrapeMetricSum(bases: readonly string[], name: string, labels: Readonly<Record<string, string>>): Promise<number> {
  const expositions = await Promise.all(
    bases.map(async (base) => {
      const res = await fetch(`${base}/metrics`);
      if (!res.ok) throw new Error(`GET ${base}/metrics answered ${res.status}`);
      return res.text();
    }),
  );
  return expositions.reduce((sum, text) => sum + sumMetric(text, name, labels), 0);
}
