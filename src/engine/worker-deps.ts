/** What a worker shares with its engine (and passes on to the executor). */
import type { SingleFlightCache } from '../core/cache.ts';
import type { Clock } from '../core/clock.ts';
import type { IdGenerator } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { JsonValue, RunStatus } from '../core/model.ts';
import type { EngineObserver } from '../core/observer.ts';
import type { ArtifactStore } from '../core/ports/artifact-store.ts';
import type { Store } from '../core/ports/store.ts';
import type { StagePlan } from './stage-plan.ts';

/** The engine's parts a worker runs with. */
export interface WorkerDeps {
  store: Store;
  plan: StagePlan;
  artifacts: ArtifactStore;
  logger: Logger;
  observer: EngineObserver;
  clock: Clock;
  ids: IdGenerator;
  random: () => number;
  cache: SingleFlightCache;
  /** Parsed settings by pipeline name (absent: null). */
  settings: ReadonlyMap<string, JsonValue>;
  /** Told when a commit by this worker moved a run out of `running` (an in-process hint). */
  runEnded?: (event: RunEndedEvent) => void;
}

/** A run left `running` through a commit of a worker of this process. */
export interface RunEndedEvent {
  runId: string;
  pipeline: string;
  status: RunStatus;
}
