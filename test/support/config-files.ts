/**
 * Config test helpers: a fresh temp directory per test for kiln.yaml files, and the issues of a
 * load that must fail.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'node:test';
import { ConfigError, type ConfigIssue } from '../../src/core/errors.ts';

/** A temp directory made before and removed after each test of the calling file. */
export interface ConfigDir {
  /** The current test's directory. */
  path(): string;
  /** Writes `text` to `name` (default kiln.yaml) in it; returns the file's path. */
  writeYaml(text: string, name?: string): string;
}

/** Registers the per-test directory hooks (call at module level or in a describe body). */
export function useConfigDir(prefix: string): ConfigDir {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    path: () => dir,
    writeYaml(text, name = 'kiln.yaml') {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
  };
}

/** Runs `fn`, asserts it throws a ConfigError (`CONFIG_INVALID`) and returns its issues. */
export function issuesOf(fn: () => unknown): readonly ConfigIssue[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.equal(err.code, 'CONFIG_INVALID');
    return err.issues;
  }
  assert.fail('expected loadConfig to throw');
}
