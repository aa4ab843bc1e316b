/**
 * `thumbnails`: uploaded images and SVGs become previews and thumbnails, stage by stage, each on
 * its own queue with its own policy: ingest -> inspect -> transform -> render -> publish ->
 * cleanup. Runs are versions of an asset (`subjectId` = asset id, `subjectVersion` = upload
 * version), so a newer upload supersedes older runs still in flight and they can never publish.
 */
import { definePipeline } from '../../index.ts';
import { parseThumbnailsInput } from './input.ts';
import { parseThumbnailsSettings } from './settings.ts';
import { cleanup, ingest, inspect, publish, render, transform } from './stages.ts';

/** Pipeline name (also the queue prefix). */
export const THUMBNAILS_PIPELINE = 'thumbnails';

/** The `thumbnails` pipeline definition. */
export const thumbnailsPipeline = definePipeline({
  name: THUMBNAILS_PIPELINE,
  version: 1,
  parseInput: parseThumbnailsInput,
  parseSettings: parseThumbnailsSettings,
  stages: [
    { name: 'ingest', handler: ingest, policy: { timeoutMs: 120_000 } },
    { name: 'inspect', handler: inspect, policy: { timeoutMs: 30_000 } },
    // Decoding and resizing run on libvips' own threads: a few at once keep both cores busy.
    { name: 'transform', handler: transform, policy: { timeoutMs: 120_000, leaseMs: 30_000, concurrency: 2 } },
    { name: 'render', handler: render, policy: { timeoutMs: 120_000, leaseMs: 30_000, concurrency: 2 } },
    { name: 'publish', handler: publish },
    { name: 'cleanup', handler: cleanup },
  ],
});
