/**
 * Peak-RSS sampling. RSS is only observable by polling, so the peak is the maximum of samples
 * taken every `intervalMs` (a spike shorter than that can be missed).
 */
import { readFileSync } from 'node:fs';

/** A running sampler. */
export interface RssSampler {
  /** Stops sampling; returns the peak seen, in MiB. */
  stop(): number;
  /** Peak so far, in MiB. */
  peakMb(): number;
}

const BYTES_PER_MB = 1024 * 1024;

/** Reads another process's resident set from /proc (Linux); 0 when unavailable. */
export function readProcessRssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match?.[1] ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Starts sampling `read()` (default: this process's RSS) every `intervalMs`. */
export function startRssSampler(intervalMs = 50, read: () => number = () => process.memoryUsage.rss()): RssSampler {
  let peakBytes = read();
  const timer = setInterval(() => {
    peakBytes = Math.max(peakBytes, read());
  }, intervalMs);
  // The sampler must never be what keeps a finished benchmark alive.
  timer.unref();
  const peakMb = (): number => Math.round((peakBytes / BYTES_PER_MB) * 10) / 10;
  return {
    peakMb,
    stop() {
      clearInterval(timer);
      peakBytes = Math.max(peakBytes, read());
      return peakMb();
    },
  };
}
