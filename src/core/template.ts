/**
 * Templated values such as a lock key `render:{{input.assetId}}`: literal text with `{{ path }}`
 * references into a JSON scope (`input.assetId` is `scope.input.assetId`). A template is parsed
 * once, when the stage plan is built, so a malformed one fails at start-up; it is rendered per job.
 * Rendering never evaluates anything: a reference is a path lookup, and the value found is
 * inserted as text (strings as they are, numbers and booleans in their JSON spelling).
 */
import type { JsonValue } from './model.ts';

/** One piece of a parsed template: literal text, or a reference (path segments from the scope's root). */
export type TemplatePart = { readonly text: string } | { readonly path: readonly string[] };

/** A parsed template. */
export interface Template {
  /** The template as written. */
  readonly source: string;
  readonly parts: readonly TemplatePart[];
}

/** Outcome of {@link parseTemplate}: the template, or what is wrong with it. */
export type ParsedTemplate = { ok: true; template: Template } | { ok: false; problem: string };

/** Outcome of {@link renderTemplate}: the text, or which reference could not be filled. */
export type RenderedTemplate = { ok: true; text: string } | { ok: false; problem: string };

const REFERENCE = /\{\{([^{}]*)\}\}/g;
const SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Parses `source`. Every `{{ ... }}` must hold a dotted path (`input.asset.id`) whose first
 * segment is one of `roots`, and no `{{` or `}}` may stand alone.
 */
export function parseTemplate(source: string, roots: readonly string[]): ParsedTemplate {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of source.matchAll(REFERENCE)) {
    const literal = source.slice(last, match.index);
    if (literal.includes('{{') || literal.includes('}}')) return { ok: false, problem: `unbalanced braces in "${source}"` };
    if (literal !== '') parts.push({ text: literal });
    const path = (match[1] ?? '').trim().split('.');
    if (!path.every((segment) => SEGMENT.test(segment))) {
      return { ok: false, problem: `"{{${match[1] ?? ''}}}" is not a dotted path like {{input.assetId}}` };
    }
    if (!roots.includes(path[0] ?? '')) {
      return { ok: false, problem: `"{{${match[1] ?? ''}}}" must start with one of: ${roots.join(', ')}` };
    }
    parts.push({ path });
    last = match.index + match[0].length;
  }
  const rest = source.slice(last);
  if (rest.includes('{{') || rest.includes('}}')) return { ok: false, problem: `unbalanced braces in "${source}"` };
  if (rest !== '') parts.push({ text: rest });
  return { ok: true, template: { source, parts } };
}

/** The value at `path` under `scope`, or undefined when some segment is missing. */
function lookup(scope: JsonValue, path: readonly string[]): JsonValue | undefined {
  let node: JsonValue | undefined = scope;
  for (const segment of path) {
    if (typeof node !== 'object' || node === null || Array.isArray(node) || !Object.hasOwn(node, segment)) return undefined;
    node = node[segment];
  }
  return node;
}

/**
 * Fills the template's references from `scope`. Each must name a string, a number or a boolean:
 * a missing value, null, an object or an array is a problem (a key built from "[object Object]"
 * or "null" would silently share one lock between unrelated jobs).
 */
export function renderTemplate(template: Template, scope: { readonly [root: string]: JsonValue }): RenderedTemplate {
  let text = '';
  for (const part of template.parts) {
    if ('text' in part) {
      text += part.text;
      continue;
    }
    const value = lookup(scope, part.path);
    if (typeof value === 'string') text += value;
    else if (typeof value === 'number' || typeof value === 'boolean') text += JSON.stringify(value);
    else {
      const found = value === undefined ? 'nothing' : value === null ? 'null' : Array.isArray(value) ? 'a list' : 'an object';
      return { ok: false, problem: `{{${part.path.join('.')}}} of "${template.source}" found ${found}; it needs a string, number or boolean` };
    }
  }
  return { ok: true, text };
}
