/** PLACEHOLDER of the Redis store's `artifact-refs` sub-port: replaced by its implementation. */
import type { ArtifactRefsPort } from '../../core/ports/artifact-refs.ts';
import type { RedisContext } from './context.ts';

export function createArtifactRefsPort(_ctx: RedisContext): ArtifactRefsPort {
  return new Proxy({} as ArtifactRefsPort, {
    get: (_target, method) => () => Promise.reject(new Error(`redis artifact-refs.${String(method)} is not built yet`)),
  });
}
