/**
 * The artifact stores the HTTP and end-to-end tests run on: one way to choose, used both in process
 * (the HTTP harness takes `store`) and by `kiln` processes (`yaml` is their kiln.yaml `artifacts:`
 * section). The filesystem store lives in the test's directory; the S3 store in a prefix of its own
 * on the test process's S3 (test/support/s3-server.ts: a private s3rver, or KILN_S3_URL).
 *
 * The filesystem and S3 cases turn inline artifacts off (`inlineMaxBytes: 0`): their point is
 * that tier, so even a small QR image goes there. {@link inlineArtifacts} is the default setting:
 * small buffers in the store's `blobs`, the rest under the folder.
 */
import { join } from 'node:path';
import { createFsArtifactStore } from '../../src/artifacts/fs-artifact-store.ts';
import { createInlineArtifactStore } from '../../src/artifacts/inline-artifact-store.ts';
import { createS3ArtifactStore } from '../../src/artifacts/s3-artifact-store.ts';
import type { ArtifactStore } from '../../src/core/ports/artifact-store.ts';
import type { BlobsPort } from '../../src/core/ports/blobs.ts';
import { sharedS3 } from './s3-server.ts';

/** One test's artifact store. */
export interface ArtifactsUnderTest {
  /** The test's own store over the place the kiln processes use (for checks, or in process). */
  store: ArtifactStore;
  /** kiln.yaml's `artifacts:` section (ends with a newline). */
  yaml: string;
  /** The filesystem store's folder (absent on S3), for checks of its files. */
  root?: string;
  /** Releases the test's client (objects stay: each test has a place of its own). */
  close(): void;
}

/** One kind of artifact store. */
export interface ArtifactCase {
  name: string;
  /**
   * Opens a fresh, empty place for one test (the filesystem store's folder goes under `dir`);
   * `blobs` is the store's blobs sub-port, which the inline case needs.
   */
  open(dir: string, blobs?: BlobsPort): Promise<ArtifactsUnderTest>;
}

export const fsArtifacts: ArtifactCase = {
  name: 'filesystem artifacts',
  async open(dir) {
    const root = join(dir, 'artifacts');
    return { store: createFsArtifactStore({ root }), yaml: `artifacts:\n  root: ${root}\n  inlineMaxBytes: 0\n`, root, close: () => {} };
  },
};

/** The default: buffers up to 16 KiB in the store's blobs, the rest under the test's folder (no `root` for file checks). */
export const inlineArtifacts: ArtifactCase = {
  name: 'inline artifacts (store blobs + filesystem)',
  async open(dir, blobs) {
    if (!blobs) throw new Error('the inline case needs the store\'s blobs sub-port');
    const root = join(dir, 'artifacts');
    const store = createInlineArtifactStore({ blobs, underlying: createFsArtifactStore({ root }), maxInlineBytes: 16_384 });
    return { store, yaml: `artifacts:\n  root: ${root}\n`, close: () => {} };
  },
};

/** The filesystem store with a byte limit of `maxBytes` (`artifacts.maxBytes`): a full disk on demand. */
export function fsArtifactsLimited(maxBytes: number): ArtifactCase {
  return {
    name: `filesystem artifacts limited to ${maxBytes} bytes`,
    async open(dir) {
      const root = join(dir, 'artifacts');
      return { store: createFsArtifactStore({ root, maxBytes }), yaml: `artifacts:\n  root: ${root}\n  maxBytes: ${maxBytes}\n  inlineMaxBytes: 0\n`, root, close: () => {} };
    },
  };
}

export const s3Artifacts: ArtifactCase = {
  name: 'S3 artifacts',
  async open() {
    const settings = (await sharedS3()).newStore();
    const store = createS3ArtifactStore(settings);
    // Every setting kiln.yaml can hold, so the processes read them the way a deployment does.
    const lines = Object.entries(settings).map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`);
    return { store, yaml: `artifacts:\n${lines.join('\n')}\n  inlineMaxBytes: 0\n`, close: () => store.close() };
  },
};
