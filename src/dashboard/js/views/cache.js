// Cache: single-flight lookups per cache (hit, miss, stale, negative, waits for another caller's
// build, builds) as this process counted them, and the entries being built right now.
import { get } from '../api.js';
import { emptyRow, formatCount, h, patchRows, timeCell } from '../dom.js';

function ratio(part, whole) {
  return whole === 0 ? '–' : `${part === 0 ? 0 : ((part / whole) * 100).toFixed(1)} %`;
}

function counterRow(c) {
  const lookups = c.hit + c.miss + c.stale + c.negative + c.wait;
  const served = c.hit + c.stale + c.negative + c.wait;
  return h(
    'tr',
    { 'data-cache': c.cache },
    h('th', { scope: 'row', class: 'mono' }, c.cache),
    [c.hit, c.miss, c.stale, c.negative, c.wait, c.builds].map((n) => h('td', { class: 'num' }, formatCount(n))),
    h('td', { class: 'num' }, ratio(served, lookups), h('div', { class: 'meter' }, h('div', { class: 'meter-fill', 'data-ratio': lookups === 0 ? 0 : served / lookups }))),
  );
}

function entryRow(e) {
  return h(
    'tr',
    {},
    h('td', { class: 'mono' }, e.cache),
    h('td', { class: 'mono small key' }, e.key),
    h('td', { class: 'mono small' }, e.builderOwner ?? '–'),
    h('td', { class: 'num' }, e.builderFence ?? '–'),
    h('td', {}, timeCell(e.builderUntil)),
    h('td', {}, timeCell(e.updatedAt)),
  );
}

/** The cache view. */
export function cacheView(container) {
  const counters = h('tbody');
  const building = h('tbody');
  container.append(
    h('div', { class: 'view-head' }, h('h1', {}, 'Cache'), h('p', { class: 'muted' }, 'Single-flight cache lookups counted by this kiln process since it started; entries being built are read from the store (every process).')),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'data', id: 'cache-table' },
        h('thead', {}, h('tr', {}, ['Cache', 'Hits', 'Misses', 'Stale', 'Negative', 'Single-flight waits', 'Builds', 'Served from cache'].map((label, i) => h('th', { scope: 'col', class: i > 0 ? 'num' : '' }, label)))),
        counters,
      ),
    ),
    h('section', {}, h('h2', {}, 'Being built'), h('div', { class: 'table-wrap' }, h('table', { class: 'data', id: 'building-table' }, h('thead', {}, h('tr', {}, ['Cache', 'Key', 'Builder', 'Fence', 'Lease until', 'Updated'].map((label) => h('th', { scope: 'col' }, label)))), building))),
  );
  return {
    async refresh() {
      // Entries are every tenant's (their keys are content): only an admin token reads them.
      const entriesOrNull = get('/v1/cache/entries', { status: 'building', limit: 100 }).catch((err) => {
        if (err?.code === 'FORBIDDEN_SCOPE') return null;
        throw err;
      });
      const [stats, entries] = await Promise.all([get('/v1/cache/stats'), entriesOrNull]);
      if (stats.length === 0) emptyRow(counters, 8, 'No cache lookup in this process yet.');
      else patchRows(counters, stats, (c) => c.cache, counterRow);
      for (const fill of counters.querySelectorAll('.meter-fill')) fill.style.width = `${Number(fill.dataset.ratio) * 100}%`;
      if (entries === null) emptyRow(building, 6, 'Cache entries are shown to admin tokens only.');
      else if (entries.length === 0) emptyRow(building, 6, 'Nothing is being built right now.');
      else patchRows(building, entries, (e) => `${e.cache}\u0000${e.key}`, entryRow);
    },
  };
}
