/**
 * CPU time of a local PostgreSQL server, from /proc: the postmaster's own and its reaped
 * children's (a backend's time moves into the postmaster's cutime/cstime when it exits), plus
 * every live child's. Backends come and go with each pool, so only this sum covers them all.
 * Readable only when the server runs on this machine and its data directory is readable; a
 * benchmark against another host gets `undefined` and prints no server CPU.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { procStatFields, TICKS_PER_SECOND } from '../engine/process-cpu.ts';

/** The postmaster's pid (first line of postmaster.pid in `show data_directory`), or undefined when not readable here. */
export async function postmasterPidOf(connectionString: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const { rows } = await client.query<{ data_directory: string }>('show data_directory');
    const pid = Number(readFileSync(join(rows[0]?.data_directory ?? '', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && procStatFields(pid) !== undefined ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    await client.end();
  }
}

/** The postmaster's [own, reaped children's] ticks, or undefined when it is gone. */
function postmasterTicks(postmasterPid: number): [number, number] | undefined {
  const f = procStatFields(postmasterPid);
  return f ? [Number(f[11]) + Number(f[12]), Number(f[13]) + Number(f[14])] : undefined;
}

/** Readings a burst of exiting backends may spoil before one is taken as it is. */
const MAX_READINGS = 20;

/**
 * CPU seconds of the server so far (see the top). A backend reaped between reading the
 * postmaster and listing its children would be counted in neither (or both), so the reaped
 * children's time is read again after the listing and the reading repeated until it agrees.
 */
export function serverCpuSeconds(postmasterPid: number): number {
  let ticks = 0;
  for (let reading = 1; reading <= MAX_READINGS; reading++) {
    const before = postmasterTicks(postmasterPid);
    if (before === undefined) return 0;
    ticks = before[0] + before[1];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const fields = procStatFields(entry);
      if (fields && Number(fields[1]) === postmasterPid) ticks += Number(fields[11]) + Number(fields[12]);
    }
    if (postmasterTicks(postmasterPid)?.[1] === before[1]) break;
  }
  return ticks / TICKS_PER_SECOND;
}
