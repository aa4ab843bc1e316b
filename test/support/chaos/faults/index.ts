/** Fault scenarios the chaos harness runs after its crash points (full disk, slow stores, cache-expiry stampede). */
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
export const faultScenarios: FaultScenario[] = [];
