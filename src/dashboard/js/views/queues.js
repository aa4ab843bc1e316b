// Queues: depth by state, oldest ready age, throughput and failures over the last 15 minutes,
// ages of the jobs waiting now; pause, resume and drain (each after a confirmation) through
// POST /v1/queues/:queue/{pause,resume,drain}.
import { get, post, seg } from '../api.js';
import { sparkBars, stackedBar } from '../charts.js';
import { confirmed } from '../dialog.js';
import { emptyRow, formatCount, formatDuration, h, patchRows, replace } from '../dom.js';

const BUCKETS = 15;
const AGE_LABELS = ['< 1 s', '1–10 s', '10 s–1 min', '1–10 min', '10 min–1 h', '≥ 1 h'];

/** Minutes the rate is averaged over: the last full ones plus the one filling now. */
const RATE_BUCKETS = 5;

function sum(values) {
  return values.reduce((a, b) => a + b, 0);
}

/** Jobs per minute over the last RATE_BUCKETS buckets, the partial one counted for the time it covers. */
function perMinute(completed, activity) {
  const now = new Date(activity.now).getTime();
  const lastStart = new Date(activity.from).getTime() + (completed.length - 1) * activity.bucketMs;
  const covered = (Math.min(RATE_BUCKETS, completed.length) - 1) * activity.bucketMs + Math.max(1_000, now - lastStart);
  return (sum(completed.slice(-RATE_BUCKETS)) / covered) * 60_000;
}

function formatRate(n) {
  return n >= 10 || n === 0 ? formatCount(Math.round(n)) : n.toFixed(1);
}

function formatPercent(rate) {
  return rate === 0 ? '0 %' : `${(rate * 100).toFixed(rate < 0.1 ? 1 : 0)} %`;
}

function summaryCard(label, value, detail, tone = '') {
  return h('div', { class: `card ${tone}` }, h('div', { class: 'card-label' }, label), h('div', { class: 'card-value' }, value), h('div', { class: 'card-detail' }, detail));
}

function actions(queue, ctx) {
  const act = (verb, question) => () =>
    confirmed(question, async () => {
      const result = await post(`/v1/queues/${seg(queue.queue)}/${verb}`);
      await ctx.refreshNow();
      return verb === 'drain' ? `Drained ${queue.queue}: ${result.drained} jobs removed` : `${queue.queue} ${verb === 'pause' ? 'paused' : 'resumed'}`;
    });
  return h(
    'div',
    { class: 'row-actions' },
    queue.paused
      ? h('button', { class: 'button small', 'data-action': 'resume', onclick: act('resume', { title: `Resume ${queue.queue}?`, body: 'Workers start claiming its jobs again.', confirm: 'Resume' }) }, 'Resume')
      : h('button', { class: 'button small', 'data-action': 'pause', onclick: act('pause', { title: `Pause ${queue.queue}?`, body: 'No job of this queue is claimed until it is resumed. Jobs already running finish.', confirm: 'Pause' }) }, 'Pause'),
    h(
      'button',
      {
        class: 'button small danger-outline',
        'data-action': 'drain',
        disabled: queue.ready + queue.scheduled === 0,
        onclick: act('drain', { title: `Drain ${queue.queue}?`, body: `Removes its ${queue.ready + queue.scheduled} waiting jobs and cancels their runs. Running jobs finish. This cannot be undone.`, confirm: 'Drain', danger: true }),
      },
      'Drain',
    ),
  );
}

function queueRow(queue, activity, report, ctx) {
  const completed = activity?.completed ?? [];
  const failed = activity?.failed ?? [];
  const done = sum(completed);
  const failures = sum(failed);
  const rate = done + failures === 0 ? null : failures / (done + failures);
  const ages = activity?.readyAges ?? [];
  return h(
    'tr',
    { 'data-queue': queue.queue },
    h('th', { scope: 'row' }, h('span', { class: 'mono' }, queue.queue), queue.paused ? h('span', { class: 'badge status-paused queue-state', 'data-state': 'paused' }, 'paused') : null),
    h('td', { class: 'num', 'data-col': 'ready' }, formatCount(queue.ready)),
    h('td', { class: 'num' }, formatCount(queue.scheduled)),
    h('td', { class: 'num', 'data-col': 'in-flight' }, formatCount(queue.inFlight)),
    h('td', { class: 'num' }, formatCount(queue.parked)),
    h('td', { class: `num ${queue.dead > 0 ? 'alert' : ''}` }, formatCount(queue.dead)),
    h('td', { class: `num ${queue.oldestReadyAgeMs > 60_000 ? 'warn' : ''}` }, queue.ready > 0 ? formatDuration(queue.oldestReadyAgeMs) : '–'),
    h('td', { class: 'chart-cell' }, sparkBars(completed, failed, { title: `completed and failed per minute, last ${BUCKETS} minutes` }), h('span', { class: 'chart-note', title: `average of the last ${RATE_BUCKETS} minutes` }, `${formatRate(perMinute(completed, report))}/min`)),
    h(
      'td',
      { class: `num ${rate !== null && rate > 0.1 ? 'alert' : ''}` },
      rate === null ? '–' : [formatPercent(rate), h('div', { class: 'muted small' }, `${formatCount(failures)} of ${formatCount(done + failures)}`)],
    ),
    h('td', { class: 'chart-cell' }, stackedBar(ages.length ? ages : [0], AGE_LABELS)),
    h('td', {}, actions(queue, ctx)),
  );
}

/** The queues view. */
export function queuesView(container, ctx) {
  const cards = h('section', { class: 'cards', 'aria-label': 'Totals' });
  const body = h('tbody');
  const legend = h(
    'div',
    { class: 'legend' },
    h('span', {}, h('i', { class: 'swatch spark-ok' }), 'completed'),
    h('span', {}, h('i', { class: 'swatch spark-fail' }), 'failed attempts'),
    h('span', { class: 'legend-gap' }, 'Ready job ages:'),
    AGE_LABELS.map((label, i) => h('span', {}, h('i', { class: `swatch seg-${i}` }), label)),
  );
  container.append(
    h('div', { class: 'view-head' }, h('h1', {}, 'Queues'), h('p', { class: 'muted' }, `Depth now; throughput and failures per minute over the last ${BUCKETS} minutes (all processes sharing the store).`)),
    cards,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'data', id: 'queues-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Queue', 'Ready', 'Scheduled', 'In flight', 'Parked', 'Dead', 'Oldest ready', 'Throughput', 'Failure rate', 'Ready job ages', ''].map((label, i) =>
              h('th', { scope: 'col', class: (i >= 1 && i <= 6) || i === 8 ? 'num' : '' }, label),
            ),
          ),
        ),
        body,
      ),
    ),
    legend,
  );

  return {
    async refresh() {
      const [queues, activity] = await Promise.all([get('/v1/queues'), get('/v1/queues/activity', { buckets: BUCKETS, bucketMinutes: 1 })]);
      const byQueue = new Map(activity.queues.map((q) => [q.queue, q]));
      const total = (field) => sum(queues.map((q) => q[field]));
      const done = sum(activity.queues.map((q) => sum(q.completed)));
      const failures = sum(activity.queues.map((q) => sum(q.failed)));
      const rate = sum(activity.queues.map((q) => perMinute(q.completed, activity)));
      replace(
        cards,
        summaryCard('Ready', formatCount(total('ready')), `${formatCount(total('scheduled'))} scheduled`),
        summaryCard('In flight', formatCount(total('inFlight')), `${queues.filter((q) => q.paused).length} paused`),
        summaryCard('Throughput', `${formatRate(rate)}/min`, `${formatCount(done)} jobs done in ${BUCKETS} min`),
        summaryCard('Failed attempts', formatCount(failures), `${formatPercent(done + failures === 0 ? 0 : failures / (done + failures))} of attempts in ${BUCKETS} min`, failures > 0 ? 'warn' : ''),
        summaryCard('Parked · dead', `${formatCount(total('parked'))} · ${formatCount(total('dead'))}`, 'waiting for an operator', total('dead') > 0 ? 'alert' : ''),
      );
      if (queues.length === 0) emptyRow(body, 11, 'No queues yet: submit a run of a registered pipeline.');
      else patchRows(body, queues.map((queue) => ({ queue, activity: byQueue.get(queue.queue) ?? null })), (item) => item.queue.queue, (item) => queueRow(item.queue, item.activity, activity, ctx));
    },
  };
}
