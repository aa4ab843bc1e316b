// The stage timeline of a run as bars: for each stage, when its job waited on the queue, each
// attempt (failed attempts from GET /v1/runs/:id/attempts, the successful one from the stage
// record), and the waits between attempts (backoff, then the queue again).
import { formatDuration, h } from '../dom.js';

const ms = (iso) => (iso ? new Date(iso).getTime() : null);

/** Segment kinds, in legend order, with their labels. */
export const SEGMENT_LABELS = {
  queued: 'queued',
  running: 'running',
  failed: 'failed attempt',
  waiting: 'waiting to retry',
  parked: 'parked',
  dead: 'dead-lettered',
  succeeded: 'succeeded attempt',
};

/** What a stage waits in after a failed attempt, by the engine's decision (a permanent failure ends it). */
const WAIT_AFTER = {
  retry: ['waiting', 'waiting for the next attempt (backoff, then the queue)'],
  park: ['parked', 'parked: waiting for an operator to resume'],
  dead_letter: ['dead', 'dead-lettered: waiting for a replay'],
};

const LIVE_RUN = new Set(['queued', 'running', 'parked']);

/** The wait between an attempt and the next one (a retry's when nothing says otherwise). */
function waitSegment(after, from, to) {
  const [kind, title] = after ?? WAIT_AFTER.retry;
  return { kind, from, to, title };
}

/** The segments of one stage, in time order: `{ kind, from, to, title }` (epoch ms). */
function stageSegments(stage, readyAt, failures, run, now) {
  const segments = [];
  const live = LIVE_RUN.has(run.status);
  const started = ms(stage.startedAt);
  if (started === null) {
    if (live && run.currentStage === stage.stage && readyAt !== null) segments.push({ kind: 'queued', from: readyAt, to: now, title: 'waiting for a worker' });
    return segments;
  }
  if (readyAt !== null && started > readyAt) segments.push({ kind: 'queued', from: readyAt, to: started, title: 'waiting for a worker' });
  let cursor = started;
  let waitAfter = null;
  for (const attempt of failures) {
    const from = ms(attempt.startedAt);
    const to = ms(attempt.failedAt);
    if (from > cursor) segments.push(waitSegment(waitAfter, cursor, from));
    segments.push({ kind: 'failed', from, to, title: `attempt ${attempt.attempt} on ${attempt.workerId ?? '?'}: ${attempt.error.code} (${attempt.action.replace('_', ' ')})` });
    cursor = to;
    waitAfter = WAIT_AFTER[attempt.action] ?? null;
  }
  const finished = ms(stage.finishedAt);
  if (stage.status === 'succeeded' && finished !== null) {
    const from = Math.max(cursor, finished - (stage.durationMs ?? 0));
    if (from > cursor) segments.push(waitSegment(waitAfter, cursor, from));
    segments.push({ kind: 'succeeded', from, to: finished, title: `succeeded in ${formatDuration(stage.durationMs)}` });
  } else if (stage.status === 'running' && live) {
    segments.push({ kind: 'running', from: cursor, to: now, title: `running on ${stage.leaseOwner ?? '?'}` });
  } else if (waitAfter !== null && run.status !== 'cancelled' && run.status !== 'failed' && now > cursor) {
    segments.push(waitSegment(waitAfter, cursor, now));
  }
  return segments;
}

/**
 * Rows of the timeline, one per stage in pipeline order: `{ stage, status, attempts, segments }`.
 * A stage's job became ready when the stage before it finished (the first when the run was created).
 */
export function timelineRows(run, stages, attempts, now = Date.now()) {
  let readyAt = ms(run.createdAt);
  return stages.map((stage) => {
    const failures = attempts.filter((a) => a.stage === stage.stage && a.kind === 'stage');
    const segments = stageSegments(stage, readyAt, failures, run, now);
    readyAt = stage.status === 'succeeded' ? ms(stage.finishedAt) : null;
    return { stage: stage.stage, status: stage.status, attempts: stage.attempts, segments };
  });
}

/** The timeline as an SVG chart: a label column, one bar row per stage, a time axis. */
export function timelineChart(rows, { start, end, width = 900 }) {
  const labelWidth = 150;
  const rowHeight = 30;
  const top = 8;
  const plot = width - labelWidth - 12;
  const span = Math.max(1, end - start);
  const x = (t) => labelWidth + ((t - start) / span) * plot;
  const height = top + rows.length * rowHeight + 28;
  const ticks = Array.from({ length: 5 }, (_, i) => start + (span * i) / 4);
  return h(
    'svg:svg',
    { viewBox: `0 0 ${width} ${height}`, class: 'timeline', role: 'img', 'aria-label': 'stage timeline' },
    ticks.map((t) => h('svg:line', { x1: x(t), x2: x(t), y1: top, y2: height - 22, class: 'grid' })),
    rows.map((row, i) => {
      const y = top + i * rowHeight;
      return h(
        'svg:g',
        { class: 'stage-row', 'data-stage': row.stage },
        h('svg:text', { x: 0, y: y + 19, class: 'stage-label' }, row.stage),
        h('svg:text', { x: labelWidth - 10, y: y + 19, class: 'stage-attempts', 'text-anchor': 'end' }, row.attempts > 1 ? `×${row.attempts}` : ''),
        h('svg:rect', { x: labelWidth, y: y + 6, width: plot, height: rowHeight - 12, class: 'track' }),
        row.segments.map((seg) =>
          h(
            'svg:rect',
            { x: x(seg.from), y: y + 6, width: Math.max(2, x(seg.to) - x(seg.from)), height: rowHeight - 12, rx: 2, class: `bar bar-${seg.kind}`, 'data-kind': seg.kind },
            h('svg:title', {}, `${row.stage}: ${seg.title} (${formatDuration(seg.to - seg.from)})`),
          ),
        ),
      );
    }),
    ticks.map((t, i) =>
      h('svg:text', { x: x(t), y: height - 6, class: 'tick', 'text-anchor': i === 0 ? 'start' : i === ticks.length - 1 ? 'end' : 'middle' }, i === 0 ? '0' : `+${formatDuration(t - start)}`),
    ),
  );
}
