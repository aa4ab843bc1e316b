/**
 * Templates in command stages: `{{input.x}}`, `{{stage.fetch.outputs.y}}`,
 * `{{stage.fetch.artifacts.page.html}}` and `{{run.id}}` inside an argument, an environment value,
 * a cache key, a lock key or a publication subject. A template is replaced by its value as text
 * INSIDE the one argument (or value) it is written in: values are never split into words and never
 * read by a shell, so `x; touch /tmp/pwned` or `$(id)` arrive as one literal argument.
 *
 * Pure: parsing, reference checks and rendering over values the caller supplies.
 */

/** What a template refers to. */
export type TemplateRef =
  /** A field of the run's input (`input.a.b`: nested fields). */
  | { kind: 'input'; path: readonly string[] }
  /** An `::output key=value` of an earlier stage. */
  | { kind: 'output'; stage: string; key: string }
  /** The local path of a file an earlier stage left in its output dir (the rest after `artifacts.` is the file name). */
  | { kind: 'artifact'; stage: string; file: string }
  | { kind: 'run'; field: RunField };

/** Run fields a template may name. */
export const RUN_FIELDS = ['id', 'subjectId', 'subjectVersion', 'pipeline'] as const;
export type RunField = (typeof RUN_FIELDS)[number];

/** One piece of a parsed template. */
export type TemplatePart = { text: string } | { ref: TemplateRef; expression: string };

/** A problem found while parsing, at `offset` (0-based, in code units) of the text. */
export interface TemplateProblem {
  offset: number;
  message: string;
}

/** A parsed template. */
export interface ParsedTemplate {
  parts: readonly TemplatePart[];
  problems: readonly TemplateProblem[];
}

const OPEN = '{{';
const CLOSE = '}}';
const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const OUTPUT_KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Parses `text`; references are checked for their form only (see {@link templateRefProblem} for meaning). */
export function parseTemplate(text: string): ParsedTemplate {
  const parts: TemplatePart[] = [];
  const problems: TemplateProblem[] = [];
  let at = 0;
  while (at < text.length) {
    const open = text.indexOf(OPEN, at);
    if (open < 0) {
      parts.push({ text: text.slice(at) });
      break;
    }
    if (open > at) parts.push({ text: text.slice(at, open) });
    const close = text.indexOf(CLOSE, open + OPEN.length);
    if (close < 0) {
      problems.push({ offset: open, message: `unterminated template "${text.slice(open, open + 30)}": missing }}` });
      break;
    }
    const expression = text.slice(open + OPEN.length, close).trim();
    const ref = parseRef(expression);
    if (typeof ref === 'string') problems.push({ offset: open, message: ref });
    else parts.push({ ref, expression });
    at = close + CLOSE.length;
  }
  return { parts, problems };
}

/** The references of a template, in order. */
export function templateRefs(template: ParsedTemplate): TemplateRef[] {
  return template.parts.flatMap((p) => ('ref' in p ? [p.ref] : []));
}

/** True when `text` holds at least one `{{`. */
export function hasTemplate(text: string): boolean {
  return text.includes(OPEN);
}

/** A reference expression (`input.url`) as a ref, or the message saying what is wrong with it. */
export function parseRef(expression: string): TemplateRef | string {
  const [root, ...rest] = expression.split('.');
  if (root === 'input') {
    if (rest.length === 0 || !rest.every((s) => IDENT.test(s))) return `"${expression}": write input.<field> (letters, digits, _ and -; nested fields with dots)`;
    return { kind: 'input', path: rest };
  }
  if (root === 'run') {
    const field = rest.join('.');
    if (!(RUN_FIELDS as readonly string[]).includes(field)) return `"${expression}": run fields are ${RUN_FIELDS.map((f) => `run.${f}`).join(', ')}`;
    return { kind: 'run', field: field as RunField };
  }
  if (root === 'stage') {
    const [stage, section, ...name] = rest;
    const joined = name.join('.');
    if (stage === undefined || !IDENT.test(stage) || joined === '') {
      return `"${expression}": write stage.<name>.outputs.<key> or stage.<name>.artifacts.<file>`;
    }
    if (section === 'outputs') {
      if (!OUTPUT_KEY.test(joined)) return `"${expression}": an output key has letters, digits, _, . and -`;
      return { kind: 'output', stage, key: joined };
    }
    if (section === 'artifacts') return { kind: 'artifact', stage, file: joined };
    return `"${expression}": write stage.<name>.outputs.<key> or stage.<name>.artifacts.<file>`;
  }
  return `unknown template "{{${expression}}}": templates name input.<field>, stage.<name>.outputs.<key>, stage.<name>.artifacts.<file> or run.<field>`;
}

/** What a reference may name where it is used. */
export interface TemplateScope {
  /** Declared inputs (top-level names), or null when the pipeline declares none. */
  inputs: readonly string[] | null;
  /** Stages whose outputs and artifacts exist when the template is rendered. */
  stages: readonly string[];
  /** Every stage of the pipeline (to tell "later stage" from "no such stage"). */
  allStages: readonly string[];
}

/** Why `ref` cannot be rendered in `scope`, or null when it can. */
export function templateRefProblem(ref: TemplateRef, scope: TemplateScope): string | null {
  if (ref.kind === 'input') {
    const field = ref.path[0] ?? '';
    if (scope.inputs === null) return `input.${field} is used but the pipeline declares no inputs (add inputs: {${field}: string})`;
    if (!scope.inputs.includes(field)) return `unknown input "${field}" (declared: ${scope.inputs.join(', ') || 'none'})`;
    return null;
  }
  if (ref.kind === 'output' || ref.kind === 'artifact') {
    if (scope.stages.includes(ref.stage)) return null;
    if (scope.allStages.includes(ref.stage)) return `stage "${ref.stage}" has not run yet here (only earlier stages can be referenced: ${scope.stages.join(', ') || 'none'})`;
    return `unknown stage "${ref.stage}" (stages: ${scope.allStages.join(', ')})`;
  }
  return null;
}

/** Renders a parsed template; `resolve` gives each reference's value as text. */
export function renderTemplate(template: ParsedTemplate, resolve: (ref: TemplateRef, expression: string) => string): string {
  return template.parts.map((p) => ('ref' in p ? resolve(p.ref, p.expression) : p.text)).join('');
}
