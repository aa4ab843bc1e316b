/**
 * Reads `kiln.yaml`: parses it keeping source ranges, validates it against {@link KilnFileSchema}
 * and converts durations. Every problem becomes a {@link ConfigIssue} with the 1-based line and
 * column of the offending node, so users can jump straight to it.
 */
import { readFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { ConfigIssue } from '../core/errors.ts';
import { KilnFileSchema } from './schema.ts';
import { isPlainObject, normalizeDurations, validateAgainst, type FieldProblem } from './validate.ts';

/** A parsed and validated config file. */
export interface ConfigFile {
  /** Absolute path, used as the issue source. */
  source: string;
  /** The file's content with durations in ms; fields that failed validation may hold anything. */
  value: Record<string, unknown>;
  /**
   * 1-based line and column of the node at `path` (its key with `at: 'key'`), or of the deepest
   * ancestor that exists; undefined for an empty document. List items are named by their index.
   */
  positionOf(path: readonly string[], at?: 'key' | 'value'): { line: number; column: number } | undefined;
}

/** Result of {@link readConfigFile}: `file` is null when the file cannot be read or parsed. */
export interface ConfigFileResult {
  file: ConfigFile | null;
  issues: ConfigIssue[];
}

/** Reads, parses and validates one config file. Never throws for bad content: see `issues`. */
export function readConfigFile(source: string): ConfigFileResult {
  let text: string;
  try {
    text = readFileSync(source, 'utf8');
  } catch (err) {
    return { file: null, issues: [{ source, path: '', message: `cannot read file: ${(err as Error).message}` }] };
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // Syntax errors make the tree unreliable; report them alone rather than guess at the rest.
    const issues = doc.errors.map((e) => ({
      source,
      path: '',
      line: e.linePos?.[0].line,
      column: e.linePos?.[0].col,
      message: `YAML syntax: ${e.message.split('\n')[0] ?? e.message}`,
    }));
    return { file: null, issues: issues.map(dropUndefinedLine) };
  }
  const positionOf = (path: readonly string[], at: 'key' | 'value' = 'value'): { line: number; column: number } | undefined => {
    const offset = offsetOf(doc, path, at);
    if (offset === undefined) return undefined;
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const raw: unknown = withoutEmptyValues(doc.toJS()) ?? {};
  if (!isPlainObject(raw)) {
    return { file: null, issues: [dropUndefinedLine({ source, path: '', ...positionOf([]), message: 'the document must be a mapping' })] };
  }
  const problems = validateAgainst(KilnFileSchema, raw);
  const normalized = normalizeDurations(KilnFileSchema, raw);
  const toIssue = (p: FieldProblem): ConfigIssue =>
    dropUndefinedLine({ source, path: p.path.join('.'), ...positionOf(p.path, p.atKey ? 'key' : 'value'), message: p.message });
  return {
    file: { source, value: normalized.value as Record<string, unknown>, positionOf },
    issues: [...problems, ...normalized.problems].map(toIssue),
  };
}

/**
 * Drops keys whose value is empty (`key:` or `~`): a section whose entries are all commented out
 * means "nothing set here", not "a null where a mapping belongs".
 */
function withoutEmptyValues(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) if (child !== null) out[key] = withoutEmptyValues(child);
  return out;
}

/** Source offset of the node at `path`, or of its deepest existing ancestor. */
function offsetOf(doc: Document.Parsed, path: readonly string[], at: 'key' | 'value'): number | undefined {
  let node: unknown = doc.contents;
  let offset = (doc.contents as Node | null)?.range?.[0];
  for (const [i, segment] of path.entries()) {
    if (isSeq(node)) {
      const item = node.items[Number(segment)] as Node | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
      continue;
    }
    if (!isMap(node)) break;
    const pair = node.items.find((p) => keyText(p.key) === segment);
    if (!pair) break;
    const keyOffset = (pair.key as Node | null)?.range?.[0];
    const valueOffset = (pair.value as Node | null)?.range?.[0];
    const last = i === path.length - 1;
    // An empty value (`timeoutMs:`) has no useful range of its own: its key's line is the answer.
    offset = last && at === 'value' && valueOffset !== undefined ? valueOffset : (keyOffset ?? offset);
    node = pair.value;
  }
  return offset;
}

/** The text of a mapping key as `toJS` would make it a property name. */
function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}

/** Issues carry `line` and `column` only when known (exactOptionalPropertyTypes-friendly). */
function dropUndefinedLine(issue: { source: string; path: string; line?: number | undefined; column?: number | undefined; message: string }): ConfigIssue {
  const { line, column, ...rest } = issue;
  if (line === undefined) return rest;
  return column === undefined ? { ...rest, line } : { ...rest, line, column };
}
