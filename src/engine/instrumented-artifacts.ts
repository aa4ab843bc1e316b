/**
 * The artifact store as the engine hands it out (`kiln.artifacts`, `ctx.artifacts`): reads and
 * writes are spans (`kiln.artifact.put`, `kiln.artifact.get`, children of the attempt or request
 * that made them) and failed writes are counted. Listing, removal and the temp sweep pass through.
 */
import { ValidationError } from '../core/errors.ts';
import type { EngineObserver } from '../core/observer.ts';
import type { ArtifactStore } from '../core/ports/artifact-store.ts';
import { withSpan } from './tracing.ts';

/** Wraps `artifacts` with spans and the `artifactWriteFailed` count. */
export function instrumentArtifacts(artifacts: ArtifactStore, observer: EngineObserver): ArtifactStore {
  return {
    put: (data, options) =>
      withSpan(
        'kiln.artifact.put',
        async (span) => {
          try {
            const ref = await artifacts.put(data, options);
            if (span.isRecording()) span.setAttributes({ 'kiln.artifact.ref': ref.ref, 'kiln.artifact.size': ref.size, 'kiln.artifact.media_type': ref.mediaType });
            return ref;
          } catch (err) {
            // A refused write (too large, bad input) is the caller's error, not a failed commit of bytes.
            if (!(err instanceof ValidationError)) observer.artifactWriteFailed();
            throw err;
          }
        },
      ),
    get: (ref, options) =>
      withSpan(
        'kiln.artifact.get',
        async (span) => {
          const bytes = await artifacts.get(ref, options);
          if (span.isRecording()) span.setAttribute('kiln.artifact.size', bytes.byteLength);
          return bytes;
        },
        { attributes: () => ({ 'kiln.artifact.ref': ref }) },
      ),
    has: (ref) => artifacts.has(ref),
    collectOrphanedTemps: (olderThanMs) => artifacts.collectOrphanedTemps(olderThanMs),
    listTemps: () => artifacts.listTemps(),
    list: () => artifacts.list(),
    remove: (ref, options) => artifacts.remove(ref, options),
    ...(artifacts.read ? { read: (ref: string) => (artifacts.read as NonNullable<ArtifactStore['read']>).call(artifacts, ref) } : {}),
    ...(artifacts.checkWritable ? { checkWritable: () => (artifacts.checkWritable as () => Promise<void>).call(artifacts) } : {}),
  };
}
