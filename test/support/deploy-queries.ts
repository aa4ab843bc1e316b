/**
 * The PromQL expressions of deploy/: the Grafana board's panel targets (its variables replaced by
 * what Grafana would put there: every pipeline and queue, a rate interval), the alerting rules
 * and the autoscaling triggers; and the metric names an expression reads, so tests can hold the
 * board to kiln's own metrics.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const DEPLOY = new URL('../../deploy/', import.meta.url);

/** Paths of the deploy files. */
export const DEPLOY_FILES = {
  rules: fileURLToPath(new URL('prometheus/kiln-alerts.yml', DEPLOY)),
  ruleTests: fileURLToPath(new URL('prometheus/kiln-alerts.test.yml', DEPLOY)),
  prometheusConfig: fileURLToPath(new URL('prometheus/prometheus.yml', DEPLOY)),
  board: fileURLToPath(new URL('grafana/kiln-dashboard.json', DEPLOY)),
  autoscaling: fileURLToPath(new URL('autoscaling/kiln-worker-scaledobject.yaml', DEPLOY)),
} as const;

/** One expression and where it comes from. */
export interface DeployQuery {
  /** `panel <title>`, `alert <name>`, `trigger <name>` or `variable <name>`. */
  source: string;
  expr: string;
}

/** A panel of the board as the tests read it. */
export interface BoardPanel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { refId: string; expr: string; datasource?: { uid: string } }[];
}

/** The board as the tests read it. */
export interface Board {
  uid: string;
  panels: BoardPanel[];
  templating: { list: { name: string; type: string; query: string | { query: string } }[] };
}

/** What Grafana substitutes for the board's variables when everything is selected. */
export const BOARD_VARIABLES: Readonly<Record<string, string>> = { pipeline: '.*', queue: '.*', __rate_interval: '30s' };

export function readBoard(): Board {
  return JSON.parse(readFileSync(DEPLOY_FILES.board, 'utf8')) as Board;
}

/** An expression with `$var` and `${var}` replaced per {@link BOARD_VARIABLES}. */
export function substitute(expr: string): string {
  return expr.replace(/\$\{?(\w+)\}?/g, (whole, name: string) => BOARD_VARIABLES[name] ?? whole);
}

/** Every panel with targets, its expressions substituted. */
export function boardPanels(): { title: string; exprs: string[] }[] {
  return readBoard()
    .panels.filter((p) => p.type !== 'row')
    .map((p) => ({ title: p.title, exprs: (p.targets ?? []).map((t) => substitute(t.expr)) }));
}

/** Every `expr` of the alerting rules. */
export function ruleQueries(): DeployQuery[] {
  const rules = parse(readFileSync(DEPLOY_FILES.rules, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ source: `alert ${r.alert}`, expr: r.expr.trim() })));
}

/** Every Prometheus query of the autoscaling example. */
export function autoscalingQueries(): DeployQuery[] {
  const scaled = parse(readFileSync(DEPLOY_FILES.autoscaling, 'utf8')) as { spec: { triggers: { name: string; type: string; metadata: { query: string } }[] } };
  return scaled.spec.triggers.filter((t) => t.type === 'prometheus').map((t) => ({ source: `trigger ${t.name}`, expr: t.metadata.query }));
}

/** Every expression of deploy/: board panels, rules and autoscaling triggers. */
export function allQueries(): DeployQuery[] {
  const panels = boardPanels().flatMap((p) => p.exprs.map((expr) => ({ source: `panel ${p.title}`, expr })));
  return [...panels, ...ruleQueries(), ...autoscalingQueries()];
}

/** PromQL words that are not metric names. */
const PROMQL_WORDS = new Set([
  'sum', 'min', 'max', 'avg', 'count', 'rate', 'irate', 'increase', 'histogram_quantile', 'clamp_min', 'clamp_max', 'abs',
  'and', 'or', 'unless', 'bool', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'offset', 'vector', 'time',
]);

/** The metric names `expr` reads (label matchers, groupings, strings and ranges ignored). */
export function metricNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const words = bare.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  return [...new Set(words.filter((w) => !PROMQL_WORDS.has(w)))];
}
