/**
 * Where a SQLite store's writes land: the frames its write-ahead log received over a phase (each
 * a page some commit wrote), grouped by the table or index that owns the page, per commit. A
 * b-tree keyed by a hash shows up as about one page per row written, a hot page (the newest runs,
 * queue heads) as at most one per commit; the count does not move with the machine's load, so it
 * tells an A/B of the schema or of a write path what requests/s cannot.
 *
 * It reads the files of a live store: the log is sampled as it grows (a checkpoint restarts it, a
 * new salt in its header, and the sampler starts over at its first frame), frames counted up to the
 * last commit frame seen; the owners of pages come at the end from the `dbstat` table of a
 * read-only connection opened beside the writer.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import Database from 'better-sqlite3';

/** WAL frames per commit by owning table or index (`(unknown)`: freed, or new since the read). */
export interface WalPages {
  pageSize: number;
  commits: number;
  framesPerCommit: number;
  /** The owners writing the most pages, most first. */
  byOwner: { owner: string; perCommit: number }[];
}

/** A running sampler; `stop` reads the owners and returns the phase's pages (undefined: no commit seen). */
export interface WalSampler {
  stop(top?: number): WalPages | undefined;
}

const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;

/** Frames read per read call. */
const FRAMES_PER_READ = 256;

/** Reads up to `buffer.length` bytes at `position` into `buffer`; the part read. */
function readAt(fd: number, position: number, buffer: Buffer): Buffer {
  return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, position));
}

/** Owner of each page of the database at `dbPath`, interior b-tree pages marked so. */
function pageOwners(dbPath: string): Map<number, string> {
  const db = new Database(dbPath, { readonly: true });
  const owners = new Map<number, string>();
  try {
    for (const row of db.prepare<[], { name: string; pageno: number; pagetype: string | null }>('SELECT name, pageno, pagetype FROM dbstat').iterate()) {
      owners.set(row.pageno, row.pagetype === 'internal' ? `${row.name} (interior)` : row.name);
    }
  } finally {
    db.close();
  }
  return owners;
}

/** Starts sampling the WAL of the database at `dbPath` every `intervalMs`, from its current end. */
export function startWalSampler(dbPath: string, intervalMs = 100): WalSampler {
  const pages: number[] = [];
  let commits = 0;
  let pageSize = 0;
  // The log's generation: the two salts of its header, which each of its frames repeats.
  let salt1 = -1;
  let salt2 = -1;
  let offset = 0;
  const header = Buffer.alloc(WAL_HEADER_BYTES);
  let frames = Buffer.alloc(0);
  const sample = (skip: boolean): void => {
    const fd = openSync(`${dbPath}-wal`, 'r');
    try {
      if (readAt(fd, 0, header).length < WAL_HEADER_BYTES) return;
      if (header.readUInt32BE(16) !== salt1 || header.readUInt32BE(20) !== salt2) {
        salt1 = header.readUInt32BE(16);
        salt2 = header.readUInt32BE(20);
        pageSize = header.readUInt32BE(8);
        offset = WAL_HEADER_BYTES;
      }
      const frameBytes = FRAME_HEADER_BYTES + pageSize;
      if (frames.length !== frameBytes * FRAMES_PER_READ) frames = Buffer.alloc(frameBytes * FRAMES_PER_READ);
      for (;;) {
        const chunk = readAt(fd, offset, frames);
        let committedAt = 0;
        const seen: number[] = [];
        let newCommits = 0;
        for (let at = 0; at + frameBytes <= chunk.length; at += frameBytes) {
          // A frame of an earlier generation of the log ends the current one.
          if (chunk.readUInt32BE(at + 8) !== salt1 || chunk.readUInt32BE(at + 12) !== salt2) break;
          seen.push(chunk.readUInt32BE(at));
          // A commit frame carries the database size after the commit; others carry 0.
          if (chunk.readUInt32BE(at + 4) !== 0) {
            committedAt = seen.length;
            newCommits += 1;
          }
        }
        if (committedAt === 0) return;
        offset += committedAt * frameBytes;
        if (!skip) {
          for (let i = 0; i < committedAt; i++) pages.push(seen[i] as number);
          commits += newCommits;
        }
      }
    } finally {
      closeSync(fd);
    }
  };
  // What the log holds already was written before the phase.
  sample(true);
  const timer = setInterval(() => {
    // A phase that failed may have its store removed before anyone stops the sampler.
    try {
      sample(false);
    } catch {
      clearInterval(timer);
    }
  }, intervalMs);
  timer.unref();
  return {
    stop(top = 15) {
      clearInterval(timer);
      sample(false);
      if (commits === 0) return undefined;
      const owners = pageOwners(dbPath);
      const counts = new Map<string, number>();
      for (const page of pages) {
        const owner = owners.get(page) ?? '(unknown)';
        counts.set(owner, (counts.get(owner) ?? 0) + 1);
      }
      const perCommit = (n: number): number => Math.round((n / commits) * 100) / 100;
      return {
        pageSize,
        commits,
        framesPerCommit: perCommit(pages.length),
        byOwner: [...counts].sort((a, b) => b[1] - a[1]).slice(0, top).map(([owner, n]) => ({ owner, perCommit: perCommit(n) })),
      };
    },
  };
}
