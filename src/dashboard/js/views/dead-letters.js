// Dead letters: the dead stage jobs of dead-lettered runs, grouped by error code, and replay of
// one or of a selection (after a confirmation) through POST /v1/jobs/:id/replay, one call per job.
import { get, post, seg } from '../api.js';
import { confirmed } from '../dialog.js';
import { emptyRow, formatCount, h, link, patchRows, replace, shortId } from '../dom.js';

const PAGE_SIZE = 100;

/** Replays each job in turn; resolves with a summary, rejects with the first error if none replayed. */
async function replayAll(ids) {
  const errors = [];
  for (const id of ids) {
    try {
      await post(`/v1/jobs/${seg(id)}/replay`);
    } catch (err) {
      errors.push(err);
    }
  }
  const done = ids.length - errors.length;
  if (done === 0 && errors[0]) throw errors[0];
  const first = errors[0];
  return `Replayed ${done} of ${ids.length}${first ? ` (${first.code}: ${first.message})` : ''}`;
}

function groupCard(group, selected, select) {
  return h(
    'button',
    { class: `group ${selected ? 'selected' : ''}`, 'data-code': group.code, 'aria-pressed': selected ? 'true' : 'false', onclick: () => select(selected ? null : group.code) },
    h('span', { class: 'group-count' }, formatCount(group.count)),
    h('span', { class: 'group-code mono' }, group.code),
    h('span', { class: `badge class-${group.errorClass}` }, group.errorClass),
    h('span', { class: 'group-message' }, group.message),
    h('span', { class: 'group-queues muted small' }, group.queues.join(', ')),
  );
}

/** The dead letters view. */
export function deadLettersView(container, ctx) {
  const params = new URLSearchParams(ctx.params);
  const selection = new Set();
  const groups = h('div', { class: 'groups', id: 'dead-letter-groups' });
  const body = h('tbody');
  const selectAll = h('input', { type: 'checkbox', 'aria-label': 'Select every dead letter on this page' });
  const replaySelected = h('button', { class: 'button primary', 'data-action': 'replay-selected', disabled: true }, 'Replay selected');
  const heading = h('h2');
  let shown = [];

  const select = (code) => {
    if (code) params.set('code', code);
    else params.delete('code');
    selection.clear();
    ctx.setParams(params);
  };
  const syncToolbar = () => {
    replaySelected.disabled = selection.size === 0;
    replaySelected.textContent = selection.size === 0 ? 'Replay selected' : `Replay selected (${selection.size})`;
    selectAll.checked = shown.length > 0 && shown.every((j) => selection.has(j.id));
  };
  const replay = (ids) =>
    confirmed(
      {
        title: ids.length === 1 ? 'Replay this dead letter?' : `Replay ${ids.length} dead letters?`,
        body: 'Each job becomes ready again with fresh attempts, and its run continues from the stage that failed.',
        confirm: ids.length === 1 ? 'Replay' : `Replay ${ids.length}`,
      },
      async () => {
        const message = await replayAll(ids);
        for (const id of ids) selection.delete(id);
        await ctx.refreshNow();
        return message;
      },
    );
  selectAll.addEventListener('change', () => {
    for (const job of shown) {
      if (selectAll.checked) selection.add(job.id);
      else selection.delete(job.id);
    }
    for (const box of body.querySelectorAll('input[type=checkbox]')) box.checked = selectAll.checked;
    syncToolbar();
  });
  replaySelected.addEventListener('click', () => replay([...selection]));

  const row = (job) => {
    const box = h('input', { type: 'checkbox', 'aria-label': `Select ${job.id}`, checked: selection.has(job.id) });
    box.addEventListener('change', () => {
      if (box.checked) selection.add(job.id);
      else selection.delete(job.id);
      syncToolbar();
    });
    return h(
      'tr',
      { 'data-job': job.id, 'data-run': job.runId },
      h('td', {}, box),
      h('td', {}, link(`/runs/${encodeURIComponent(job.runId)}`, shortId(job.runId))),
      h('td', { class: 'mono small' }, job.queue),
      h('td', { class: 'num' }, `${job.attempt}/${job.maxAttempts}`),
      h('td', {}, job.lastError ? h('span', { class: `badge class-${job.lastError.class}` }, job.lastError.class) : '–'),
      h('td', { class: 'mono small' }, job.lastError?.code ?? '–'),
      h('td', { class: 'message' }, job.lastError?.message ?? ''),
      h('td', {}, h('button', { class: 'button small', 'data-action': 'replay', onclick: () => replay([job.id]) }, 'Replay')),
    );
  };

  container.append(
    h('div', { class: 'view-head' }, h('h1', {}, 'Dead letters'), h('p', { class: 'muted' }, 'Jobs whose attempts ran out; a replay makes the job ready again and its run continues. Runs that failed permanently are not replayable and not listed.')),
    groups,
    h('div', { class: 'toolbar' }, heading, replaySelected),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'data', id: 'dead-letters-table' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'check' }, selectAll), ['Run', 'Queue', 'Attempts', 'Class', 'Code', 'Message', ''].map((label) => h('th', { scope: 'col', class: label === 'Attempts' ? 'num' : null }, label)))),
        body,
      ),
    ),
  );

  return {
    async refresh() {
      const code = params.get('code');
      const [grouped, jobs] = await Promise.all([get('/v1/dead-letters', { groupBy: 'code' }), get('/v1/dead-letters', { code, limit: PAGE_SIZE })]);
      const total = grouped.reduce((n, g) => n + g.count, 0);
      replace(
        groups,
        h('button', { class: `group all ${code ? '' : 'selected'}`, 'aria-pressed': code ? 'false' : 'true', onclick: () => select(null) }, h('span', { class: 'group-count' }, formatCount(total)), h('span', { class: 'group-code' }, 'All codes')),
        grouped.map((g) => groupCard(g, g.code === code, select)),
      );
      shown = jobs;
      const present = new Set(jobs.map((j) => j.id));
      for (const id of [...selection]) if (!present.has(id)) selection.delete(id);
      heading.textContent = `${code ? `${code}: ` : ''}${formatCount(jobs.length)}${jobs.length === PAGE_SIZE ? '+' : ''} dead letter${jobs.length === 1 ? '' : 's'}`;
      if (jobs.length === 0) emptyRow(body, 8, total === 0 ? 'No dead letters. Nothing waits for a replay.' : 'No dead letter with this code.');
      else patchRows(body, jobs, (j) => j.id, row);
      syncToolbar();
    },
  };
}

