/**
 * How a pipeline ships its own HTTP surface: a fastify plugin that `buildApp` mounts beside the
 * core routes, given the engine. `src/http` names no pipeline; the CLI passes the plugins of the
 * pipelines it registered.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Kiln } from '../engine/kiln-types.ts';

/** Options every pipeline plugin receives. */
export interface PipelineRoutesOptions {
  kiln: Kiln;
}

/** A pipeline's routes, for the pipeline named `pipeline` (mounted only when it is registered). */
export interface PipelineRoutes {
  pipeline: string;
  plugin: FastifyPluginAsync<PipelineRoutesOptions>;
}

/** The request and reply types a pipeline's handlers see (fastify's, re-exported so pipelines import only kiln). */
export type PipelineRequest = FastifyRequest;
export type PipelineReply = FastifyReply;

/**
 * True when the request's `If-None-Match` names `etag` (a quoted strong tag such as `"abc"`;
 * weak comparison, so `W/"abc"` matches too) or is `*`: answer 304.
 */
export function ifNoneMatch(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}
