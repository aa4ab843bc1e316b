// Runs: newest first with filters (status, pipeline, subject, tenant, creation time) and keyset
// paging (`before` = the last id of the page), all kept in the URL so a view can be shared.
import { get } from '../api.js';
import { badge, emptyRow, formatAgo, formatDuration, h, link, patchRows, replace, shortId, timeCell } from '../dom.js';

const PAGE_SIZE = 50;
const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'dead_lettered', 'parked', 'cancelled', 'superseded'];
/** Creation-time windows: value -> [label, ms back from now]. */
const WINDOWS = { '': ['Any time', 0], '15m': ['Last 15 minutes', 15 * 60_000], '1h': ['Last hour', 3_600_000], '24h': ['Last 24 hours', 86_400_000], '7d': ['Last 7 days', 7 * 86_400_000] };

function runRow(run) {
  const end = run.finishedAt ? new Date(run.finishedAt).getTime() : Date.now();
  const duration = end - new Date(run.createdAt).getTime();
  return h(
    'tr',
    { 'data-run': run.id },
    h('td', {}, link(`/runs/${encodeURIComponent(run.id)}`, shortId(run.id))),
    h('td', {}, run.pipeline),
    h('td', {}, badge(run.status)),
    h('td', { class: 'mono small' }, run.currentStage ?? '–'),
    h('td', {}, run.subjectId ? h('span', { class: 'mono small' }, run.subjectId, run.subjectVersion !== null ? h('span', { class: 'muted' }, ` v${run.subjectVersion}`) : null) : '–'),
    h('td', {}, run.tenant ?? '–'),
    h('td', {}, timeCell(run.createdAt), h('div', { class: 'muted small' }, formatAgo(run.createdAt))),
    h('td', { class: 'num' }, run.finishedAt ? formatDuration(duration) : h('span', { class: 'muted' }, formatDuration(duration))),
    h('td', { class: 'error-cell' }, run.error ? h('span', { title: run.error.message }, h('span', { class: 'mono small' }, run.error.code), ' ', run.error.message) : ''),
  );
}

function field(label, control) {
  return h('label', { class: 'field' }, h('span', {}, label), control);
}

/** The runs view. */
export function runsView(container, ctx) {
  const params = new URLSearchParams(ctx.params);
  /** Cursors of the pages before this one, so "Newer" goes back exactly. */
  const cursors = [];
  const pipelines = h('datalist', { id: 'pipelines' });
  const input = (name, placeholder) => h('input', { name, value: params.get(name) ?? '', placeholder, list: name === 'pipeline' ? 'pipelines' : null, autocomplete: 'off' });
  const controls = {
    status: h('select', { name: 'status' }, h('option', { value: '' }, 'Any status'), STATUSES.map((s) => h('option', { value: s, selected: params.get('status') === s }, s.replace('_', ' ')))),
    pipeline: input('pipeline', 'any'),
    subjectId: input('subjectId', 'any'),
    tenant: input('tenant', 'any'),
    window: h('select', { name: 'window' }, Object.entries(WINDOWS).map(([value, [label]]) => h('option', { value, selected: (params.get('window') ?? '') === value }, label))),
  };
  /** New filters start again at the first page. */
  const apply = () => {
    for (const key of [...params.keys()]) params.delete(key);
    for (const [name, control] of Object.entries(controls)) if (control.value.trim() !== '') params.set(name, control.value.trim());
    cursors.length = 0;
    ctx.setParams(params);
  };
  for (const control of Object.values(controls)) control.addEventListener('change', apply);
  const body = h('tbody');
  const pageInfo = h('span', { class: 'muted' });
  const newer = h('button', { class: 'button small', 'data-action': 'newer', onclick: () => page(cursors.pop() ?? null) }, '← Newer');
  const older = h('button', { class: 'button small', 'data-action': 'older' }, 'Older →');
  let lastId = null;
  older.addEventListener('click', () => {
    cursors.push(params.get('before') ?? '');
    page(lastId);
  });
  function page(before) {
    if (before) params.set('before', before);
    else params.delete('before');
    ctx.setParams(params);
  }

  container.append(
    h('div', { class: 'view-head' }, h('h1', {}, 'Runs'), h('p', { class: 'muted' }, 'Newest first. Filters and the page live in the address, so a view can be shared.')),
    h(
      'form',
      {
        class: 'filters',
        onsubmit: (event) => {
          event.preventDefault();
          apply();
        },
      },
      field('Status', controls.status),
      field('Pipeline', controls.pipeline),
      field('Subject', controls.subjectId),
      field('Tenant', controls.tenant),
      field('Created', controls.window),
      pipelines,
      h('button', { class: 'button', type: 'submit' }, 'Apply'),
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'data', id: 'runs-table' },
        h('thead', {}, h('tr', {}, ['Run', 'Pipeline', 'Status', 'Stage', 'Subject', 'Tenant', 'Created', 'Duration', 'Error'].map((label) => h('th', { scope: 'col', class: label === 'Duration' ? 'num' : '' }, label)))),
        body,
      ),
    ),
    h('div', { class: 'pager' }, newer, pageInfo, older),
  );

  return {
    async refresh() {
      const windowMs = WINDOWS[params.get('window') ?? '']?.[1] ?? 0;
      const query = {
        status: params.get('status'),
        pipeline: params.get('pipeline'),
        subjectId: params.get('subjectId'),
        tenant: params.get('tenant'),
        createdAfter: windowMs > 0 ? new Date(Date.now() - windowMs).toISOString() : undefined,
        before: params.get('before'),
        limit: PAGE_SIZE,
      };
      const [runs, queues] = await Promise.all([get('/v1/runs', query), pipelines.children.length === 0 ? get('/v1/queues') : null]);
      if (queues) replace(pipelines, [...new Set(queues.map((q) => q.queue.slice(0, q.queue.lastIndexOf('.'))))].map((p) => h('option', { value: p })));
      lastId = runs.at(-1)?.id ?? null;
      if (runs.length === 0) emptyRow(body, 9, params.get('before') ? 'No older runs.' : 'No run matches these filters.');
      else patchRows(body, runs, (run) => run.id, runRow);
      newer.disabled = !params.get('before');
      older.disabled = runs.length < PAGE_SIZE;
      pageInfo.textContent = runs.length === 0 ? '' : `${runs.length} runs${params.get('before') ? ` · page ${cursors.length + 1}` : ''}`;
    },
  };
}
