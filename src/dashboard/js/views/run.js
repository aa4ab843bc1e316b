// One run: its facts, the stage timeline as bars, each stage's record (progress, outputs with
// links to their artifacts, lease owner), every failed attempt, the subject's publications, and
// cancel / resume / replay through the public API (each after a confirmation).
import { get, post, seg } from '../api.js';
import { confirmed } from '../dialog.js';
import { badge, emptyRow, formatDuration, h, link, patchRows, replace, timeCell } from '../dom.js';
import { SEGMENT_LABELS, timelineChart, timelineRows } from './timeline.js';

const REF = /(sha256:[0-9a-f]{64})/;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'superseded']);
const LIVE = new Set(['queued', 'running', 'parked']);

/**
 * JSON of run `runId`, pretty-printed, with every artifact ref a link to its bytes (through the
 * run, so a tenant's token may read them).
 */
function jsonBlock(value, runId) {
  if (value === null || value === undefined) return h('span', { class: 'muted' }, '–');
  const text = JSON.stringify(value, null, 2);
  return h('pre', { class: 'json' }, text.split(REF).map((part) => (REF.test(part) ? h('a', { href: `/v1/artifacts/${encodeURIComponent(part)}?run=${encodeURIComponent(runId)}`, target: '_blank', rel: 'noopener' }, part) : part)));
}

function fact(label, value) {
  return [h('dt', {}, label), h('dd', {}, value ?? '–')];
}

function stageRow(stage, runId) {
  return h(
    'tr',
    { 'data-stage': stage.stage },
    h('th', { scope: 'row', class: 'mono' }, stage.stage),
    h('td', {}, badge(stage.status), stage.rollbackStatus ? h('div', { class: 'small muted' }, `rollback ${stage.rollbackStatus.replace('_', ' ')}`) : null),
    h('td', { class: 'num' }, stage.attempts),
    h('td', {}, timeCell(stage.startedAt)),
    h('td', {}, timeCell(stage.finishedAt)),
    h('td', { class: 'num' }, formatDuration(stage.durationMs)),
    h('td', { class: 'mono small' }, stage.leaseOwner ?? '–', stage.leaseUntil ? h('div', { class: 'muted' }, 'until ', timeCell(stage.leaseUntil)) : null),
    h('td', {}, jsonBlock(stage.progress, runId)),
    h('td', {}, stage.error ? h('div', { class: 'error-text' }, h('b', {}, stage.error.code), ` ${stage.error.message}`) : null, jsonBlock(stage.output, runId)),
  );
}

function attemptRow(attempt) {
  return h(
    'tr',
    {},
    h('td', { class: 'mono' }, attempt.stage, attempt.kind === 'rollback' ? h('span', { class: 'muted' }, ' (rollback)') : null),
    h('td', { class: 'num' }, attempt.attempt),
    h('td', { class: 'mono small' }, attempt.workerId ?? '–'),
    h('td', {}, timeCell(attempt.startedAt)),
    h('td', { class: 'num' }, formatDuration(attempt.durationMs)),
    h('td', {}, h('span', { class: `badge class-${attempt.error.class}` }, attempt.error.class)),
    h('td', { class: 'mono small' }, attempt.error.code),
    h('td', { class: 'message' }, attempt.error.message),
    h('td', {}, attempt.action.replace('_', ' ')),
  );
}

function publicationRow(p) {
  return h(
    'tr',
    {},
    h('td', { class: 'mono' }, p.profile),
    h('td', { class: 'num' }, `v${p.subjectVersion}`),
    h('td', {}, h('a', { href: p.artifactUrl, target: '_blank', rel: 'noopener', class: 'mono small' }, p.artifactRef.slice(0, 19), '…')),
    h('td', {}, timeCell(p.updatedAt)),
  );
}

/** A table; headers ending in `#` are numeric columns (right-aligned, the `#` dropped). */
function table(id, headers, body) {
  const th = (label) => (label.endsWith('#') ? h('th', { scope: 'col', class: 'num' }, label.slice(0, -1)) : h('th', { scope: 'col' }, label));
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data', id }, h('thead', {}, h('tr', {}, headers.map(th))), body));
}

/** The run view. */
export function runView(container, ctx) {
  const runId = ctx.id;
  const title = h('h1', { class: 'mono' }, runId);
  const status = h('span');
  const actions = h('div', { class: 'head-actions' });
  const facts = h('dl', { class: 'facts' });
  const errorBox = h('div');
  const chart = h('div', { class: 'timeline-wrap', id: 'timeline' });
  const stagesBody = h('tbody');
  const attemptsBody = h('tbody');
  const publications = h('section');

  const act = (label, question, run, danger = false) =>
    h('button', { class: `button ${danger ? 'danger-outline' : ''}`, 'data-action': label.toLowerCase(), onclick: () => confirmed({ ...question, danger }, async () => (await run(), await ctx.refreshNow(), `${label}: done`)) }, label);

  container.append(
    h('p', { class: 'crumbs' }, link('/runs', '← Runs')),
    h('div', { class: 'view-head split' }, h('div', {}, title, status), actions),
    facts,
    errorBox,
    h('section', {}, h('h2', {}, 'Stage timeline'), chart, h('div', { class: 'legend' }, Object.entries(SEGMENT_LABELS).map(([kind, label]) => h('span', {}, h('i', { class: `swatch bar-${kind}` }), label)))),
    h('section', {}, h('h2', {}, 'Stages'), table('stages-table', ['Stage', 'Status', 'Attempts#', 'Started', 'Finished', 'Duration#', 'Lease owner', 'Progress', 'Output'], stagesBody)),
    h('section', {}, h('h2', {}, 'Failed attempts'), table('attempts-table', ['Stage', 'Attempt#', 'Worker', 'Started', 'Duration#', 'Class', 'Code', 'Message', 'Decision'], attemptsBody)),
    publications,
  );

  return {
    async refresh() {
      const [run, attempts] = await Promise.all([get(`/v1/runs/${seg(runId)}`), get(`/v1/runs/${seg(runId)}/attempts`)]);
      const [deadJobs, pubs] = await Promise.all([
        run.status === 'dead_lettered' ? get('/v1/jobs', { runId, state: 'dead', limit: 10 }) : [],
        run.subjectId ? get('/v1/publications', { subjectId: run.subjectId }) : null,
      ]);
      replace(status, badge(run.status));
      const replayable = deadJobs.find((j) => j.kind === 'stage');
      // Buttons are rebuilt only when what they act on changed, so a refresh never swaps a button under the pointer.
      const actionsKey = `${run.status}:${replayable?.id ?? ''}`;
      if (actions.dataset.key !== actionsKey) {
        actions.dataset.key = actionsKey;
        replace(
        actions,
        run.status === 'parked' ? act('Resume', { title: 'Resume this run?', body: `It continues at ${run.currentStage}.`, confirm: 'Resume' }, () => post(`/v1/runs/${seg(runId)}/resume`)) : null,
        replayable ? act('Replay', { title: 'Replay this run?', body: `Its dead job on ${replayable.queue} becomes ready again; the run continues from ${replayable.stage}.`, confirm: 'Replay' }, () => post(`/v1/jobs/${seg(replayable.id)}/replay`)) : null,
        TERMINAL.has(run.status) ? null : act('Cancel', { title: 'Cancel this run?', body: 'Its jobs are removed and a running handler is aborted. This cannot be undone.', confirm: 'Cancel run' }, () => post(`/v1/runs/${seg(runId)}/cancel`, { reason: 'cancelled from the dashboard' }), true),
        );
      }
      const start = new Date(run.createdAt).getTime();
      // A dead-lettered run stopped moving at its last update; a live one is drawn up to now.
      const end = new Date(run.finishedAt ?? (LIVE.has(run.status) ? Date.now() : run.updatedAt)).getTime();
      replace(
        facts,
        fact('Pipeline', `${run.pipeline} v${run.pipelineVersion}`),
        fact('Subject', run.subjectId ? `${run.subjectId}${run.subjectVersion !== null ? ` v${run.subjectVersion}` : ''}` : null),
        fact('Tenant', run.tenant),
        fact('Current stage', run.currentStage),
        fact('Created', timeCell(run.createdAt)),
        fact('Finished', timeCell(run.finishedAt)),
        fact('Duration', formatDuration(end - start)),
        fact('Trace id', run.traceId ? h('span', { class: 'mono small' }, run.traceId) : null),
        fact('Idempotency key', run.idempotencyKey ? h('span', { class: 'mono small' }, run.idempotencyKey) : null),
        fact('Input', jsonBlock(run.input, run.id)),
      );
      replace(errorBox, run.error ? h('div', { class: `callout ${run.status === 'running' ? 'warn' : 'error'}` }, h('b', {}, `${run.error.class} · ${run.error.code}`), h('div', {}, run.error.message)) : null);
      // Drawn at the container's pixel width, so text keeps its size whatever the window.
      replace(chart, timelineChart(timelineRows(run, run.stages, attempts, end), { start, end, width: Math.max(480, chart.clientWidth - 32) }));
      patchRows(stagesBody, run.stages, (s) => s.stage, (s) => stageRow(s, run.id));
      if (attempts.length === 0) emptyRow(attemptsBody, 9, 'No attempt failed.');
      else patchRows(attemptsBody, attempts, (a) => `${a.jobId}:${a.failedAt}`, attemptRow);
      replace(publications, pubs && pubs.length > 0 ? [h('h2', {}, `Publications of ${run.subjectId}`), table('publications-table', ['Profile', 'Version#', 'Artifact', 'Updated'], h('tbody', {}, pubs.map(publicationRow)))] : null);
    },
  };
}
