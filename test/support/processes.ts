/**
 * Looking at processes through /proc (Linux): whether a pid is gone, and which live processes are
 * in a process group. Zombies count as gone: they run nothing and wait only for their reaper.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/** `state` and `pgrp` of /proc/<pid>/stat (the command name may hold spaces and parentheses). */
function statOf(pid: number): { state: string; pgid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', pgid: Number(fields[2]) };
  } catch {
    return null;
  }
}

/** True when `pid` no longer runs: no such process, or a zombie. */
export function isGone(pid: number): boolean {
  const stat = statOf(pid);
  return stat === null || stat.state === 'Z';
}

/** The live (non-zombie) processes whose process group is `pgid`. */
export function processesInGroup(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(Number(entry));
    if (stat && stat.pgid === pgid && stat.state !== 'Z') found.push(Number(entry));
  }
  return found;
}

/** Polls until `done()` holds or `timeoutMs` passes; returns whether it held. */
export async function eventually(done: () => boolean, timeoutMs: number, intervalMs = 10): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) return false;
    await delay(intervalMs);
  }
  return true;
}
