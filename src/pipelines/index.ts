/** The pipelines that ship with kiln. */
import type { PipelineDefinition, PipelineRoutes } from '../index.ts';
import { demoSleepPipeline } from './demo/pipeline.ts';
import { qrCodePipeline } from './qr-code/pipeline.ts';
import { qrRoutes } from './qr-code/routes.ts';
import { thumbnailsPipeline } from './thumbnails/pipeline.ts';
import { assetRoutes } from './thumbnails/routes.ts';

/** Registered by `kiln serve` and `kiln worker` unless told otherwise. */
export const builtinPipelines: readonly PipelineDefinition[] = [demoSleepPipeline, qrCodePipeline, thumbnailsPipeline];

/** The HTTP routes of the built-in pipelines (mounted by `kiln serve`). */
export const builtinRoutes: readonly PipelineRoutes[] = [qrRoutes, assetRoutes];
