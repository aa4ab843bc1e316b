/**
 * CPU time (user + system) of this process and, optionally, of a server process it uses, over a
 * timed phase: what a system spends per stage transition moves far less than its runs/s on a
 * shared machine, and counting the server's share (redis-server for BullMQ) compares systems that
 * split their work across processes with those that run in one. The scale suite reads its
 * PostgreSQL server's CPU through procStatFields too.
 */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
export const TICKS_PER_SECOND = 100;

/**
 * The fields of /proc/<pid>/stat after the command name (which may hold spaces, so the line is
 * split after its closing paren): [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime, in
 * clock ticks. Undefined when the process is gone.
 */
export function procStatFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU µs used so far by process `pid` (its utime + stime); 0 when it is gone. */
export function processCpuUs(pid: number): number {
  const fields = procStatFields(pid);
  return fields ? ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / TICKS_PER_SECOND : 0;
}

/** A started CPU count; `stop` returns the µs used per unit of `units`. */
export interface CpuMeter {
  /** CPU µs of this process (and the server, when given) since the start, per unit. */
  stop(units: number): number;
}

/** Starts counting this process's CPU, plus `serverPid`'s when given (its /proc times: 10 ms ticks). */
export function startCpuMeter(serverPid?: number): CpuMeter {
  const own = process.cpuUsage();
  const server = serverPid === undefined ? 0 : processCpuUs(serverPid);
  return {
    stop(units) {
      const mine = process.cpuUsage(own);
      const serverUs = serverPid === undefined ? 0 : processCpuUs(serverPid) - server;
      return Math.round(((mine.user + mine.system + serverUs) / units) * 10) / 10;
    },
  };
}
