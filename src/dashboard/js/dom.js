// DOM building and formatting helpers shared by every view. No framework: `h` builds elements,
// the format functions turn API values (ISO times, milliseconds, counts) into short text.

/**
 * Creates an element. `props` sets attributes (`class`, `title`, `data-*`, `aria-*`), event
 * handlers (`onclick`), and properties for `value`/`checked`/`disabled`; children may be nodes,
 * strings, numbers, arrays, or null/false (skipped).
 */
export function h(tag, props = {}, ...children) {
  const el = tag.startsWith('svg:') ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'value' || key === 'checked' || key === 'disabled' || key === 'selected') el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces the children of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/** Short duration: `850 ms`, `3.2 s`, `4 min 05 s`, `2 h 10 min`. */
export function formatDuration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '–';
  const abs = Math.abs(ms);
  if (abs < 1_000) return `${Math.round(ms)} ms`;
  if (abs < 60_000) return `${(ms / 1_000).toFixed(abs < 10_000 ? 1 : 0)} s`;
  if (abs < 3_600_000) return `${Math.floor(ms / 60_000)} min ${String(Math.floor((ms % 60_000) / 1_000)).padStart(2, '0')} s`;
  return `${Math.floor(ms / 3_600_000)} h ${String(Math.floor((ms % 3_600_000) / 60_000)).padStart(2, '0')} min`;
}

/** `12:03:04` today, else `Mar 3 12:03`. */
export function formatTime(iso) {
  if (!iso) return '–';
  const date = new Date(iso);
  const today = new Date();
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  if (date.toDateString() === today.toDateString()) return time;
  return `${date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}`;
}

/** `5 s ago`, `3 min ago`. */
export function formatAgo(iso, now = Date.now()) {
  if (!iso) return '–';
  const ms = now - new Date(iso).getTime();
  if (ms < 1_000) return 'just now';
  return `${formatDuration(ms).replace(/ \d+ (s|min)$/, '')} ago`;
}

/** A count with thousands separators. */
export function formatCount(n) {
  return Number(n ?? 0).toLocaleString('en-US');
}

/** A time element: the short time, with the full ISO time as its title. */
export function timeCell(iso) {
  return iso ? h('time', { datetime: iso, title: new Date(iso).toLocaleString() }, formatTime(iso)) : '–';
}

/** `run_0193…4f2a`: the start and end of a long id, the whole id as title. */
export function shortId(id) {
  if (typeof id !== 'string' || id.length <= 18) return id ?? '–';
  return h('span', { class: 'mono', title: id }, `${id.slice(0, id.indexOf('_') + 7)}…${id.slice(-5)}`);
}

/** A status pill: `status-<value>` picks its colour in dashboard.css. */
export function badge(status, text = String(status).replace('_', ' ')) {
  return h('span', { class: `badge status-${status}` }, text);
}

/** A link to a route of the dashboard (hash routing). */
export function link(route, ...children) {
  return h('a', { href: `#${route}` }, ...children);
}

/**
 * Updates the rows of `parent` to `items` in order, re-rendering only the items whose data
 * changed (compared as JSON), so a refresh every 2 s keeps focus, hover and selection on rows
 * that stayed the same. `render(item)` builds a row; `key(item)` names it.
 */
export function patchRows(parent, items, key, render) {
  const old = new Map([...parent.children].filter((el) => el.dataset.key !== undefined).map((el) => [el.dataset.key, el]));
  const rows = items.map((item) => {
    const k = String(key(item));
    const signature = JSON.stringify(item);
    const existing = old.get(k);
    if (existing && existing.dataset.signature === signature) return existing;
    const row = render(item);
    row.dataset.key = k;
    row.dataset.signature = signature;
    return row;
  });
  // Rows without a key (an "empty" placeholder) go; rows move only when the order changed.
  for (const el of [...parent.children]) if (!rows.includes(el)) el.remove();
  rows.forEach((row, i) => {
    if (parent.children[i] !== row) parent.insertBefore(row, parent.children[i] ?? null);
  });
}

/** Shows `message` as the only row of a table body (colspan `columns`). */
export function emptyRow(parent, columns, message) {
  replace(parent, h('tr', {}, h('td', { colspan: columns, class: 'empty' }, message)));
}
