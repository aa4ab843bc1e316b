/** The pipelines that ship with kiln. */
import type { PipelineDefinition } from '../index.ts';
import { demoSleepPipeline } from './demo/pipeline.ts';

/** Registered by `kiln serve` and `kiln worker` unless told otherwise. */
export const builtinPipelines: readonly PipelineDefinition[] = [demoSleepPipeline];
