/**
 * The one path every JSON request body takes: parsed here, not by fastify's default parser (which
 * answers "not valid JSON" for every failure, forbidden keys included). Malformed or empty JSON is
 * 400 `INVALID_JSON` with the parser's reason; a key that could poison a prototype (`__proto__`, or
 * `constructor` holding a `prototype`, as secure-json-parse refuses them) is 400
 * `JSON_FORBIDDEN_KEY` naming where it is.
 */
import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../core/errors.ts';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** A visited value and how it was reached (a parent link, so deep JSON costs linear memory). */
interface Visit {
  value: unknown;
  key: string | null;
  parent: Visit | null;
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | null = visit; at !== null && at.key !== null; at = at.parent) keys.push(at.key);
  return keys.reverse().join('.');
}

/** The dotted path of the first forbidden key in `value`, or undefined (iterative: deep JSON cannot overflow the stack). */
function forbiddenKey(value: unknown): string | undefined {
  const pending: Visit[] = [{ value, key: null, parent: null }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (!isObject(next.value)) continue;
    for (const key of Object.keys(next.value)) {
      const child = next.value[key];
      const visit: Visit = { value: child, key, parent: next };
      if (key === '__proto__') return pathOf(visit);
      if (key === 'constructor' && isObject(child) && Object.hasOwn(child, 'prototype')) return pathOf(visit);
      pending.push(visit);
    }
  }
  return undefined;
}

/** Parses a JSON request body by kiln's rules; throws the coded 400 errors described above. */
export function parseJsonBody(raw: string): unknown {
  // A leading byte-order mark is not part of the JSON text (fastify's parser skipped it too).
  const text = raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
  if (text.length === 0) throw new ValidationError('the JSON body is empty', { code: 'INVALID_JSON' });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ValidationError(`the body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`, { code: 'INVALID_JSON' });
  }
  const path = forbiddenKey(value);
  if (path !== undefined) {
    throw new ValidationError(`the JSON body has the forbidden key "${path}" (__proto__, or constructor with a prototype, is refused)`, {
      code: 'JSON_FORBIDDEN_KEY',
      details: { path },
    });
  }
  return value;
}

/** Replaces fastify's JSON parser with {@link parseJsonBody}. */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
