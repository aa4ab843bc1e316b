/** Fault scenarios the chaos harness runs after its crash points (full disk, slow stores, cache-expiry stampede). */
import { cacheStampedeScenario } from './cache-stampede.ts';
import { fullDiskScenario } from './full-disk.ts';
import { slowArtifactsScenario } from './slow-artifacts.ts';
import { slowStoreScenario } from './slow-store.ts';

export interface FaultReport {
  name: string;
  runs: number;
  lost: number;
  duplicated: number;
  duplicatePublications: number;
  stuck: number;
  /** Scenario-specific counts, printed as they are. */
  details: Record<string, number | string>;
}
export interface FaultScenario {
  name: string;
  run(options: { seed: number; store: 'sqlite' | 'postgres' | 'redis'; log: (line: string) => void }): Promise<FaultReport>;
}
export const faultScenarios: FaultScenario[] = [fullDiskScenario, slowArtifactsScenario, slowStoreScenario, cacheStampedeScenario];
