/**
 * The machine a benchmark ran on, recorded in every report so numbers are read in context.
 */
import { cpus, totalmem } from 'node:os';

/** CPU, memory and runtime of this host. */
export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  totalMemMb: number;
  node: string;
  platform: string;
}

/** Describes this host. */
export function describeMachine(): MachineInfo {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    totalMemMb: Math.round(totalmem() / 1024 / 1024),
    node: process.version,
    platform: process.platform,
  };
}
