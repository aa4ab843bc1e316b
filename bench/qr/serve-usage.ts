/**
 * What the `kiln serve` child spends over one measured phase, per counted response: CPU (user +
 * system, from /proc/<pid>/stat) and the bytes it had written to storage (/proc/<pid>/io
 * `write_bytes`: its SQLite WAL, checkpoints and artifact files). Both move far less with this
 * shared machine's load than requests/s do, so they are what an A/B of the store or of the
 * render path reads first. Zero when /proc cannot be read (not Linux, another user's process).
 */
import { readFileSync } from 'node:fs';
import { processCpuUs } from '../engine/process-cpu.ts';

/** The server's spend per counted response over a phase. */
export interface ServeUsage {
  cpuUsPerRequest: number;
  diskWriteKbPerRequest: number;
}

/** A started count; `stop` divides by the phase's counted responses. */
export interface ServeUsageMeter {
  stop(requests: number): ServeUsage;
}

function writtenBytes(pid: number): number {
  try {
    const match = /^write_bytes:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match?.[1] ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Starts counting process `pid`'s CPU and storage writes. */
export function startServeUsage(pid: number): ServeUsageMeter {
  const cpu = processCpuUs(pid);
  const written = writtenBytes(pid);
  return {
    stop(requests) {
      const per = (value: number): number => (requests > 0 ? Math.round((value / requests) * 10) / 10 : 0);
      return { cpuUsPerRequest: per(processCpuUs(pid) - cpu), diskWriteKbPerRequest: per((writtenBytes(pid) - written) / 1024) };
    },
  };
}
