// Small inline SVG charts: a sparkline of counts per bucket and a stacked bar of shares. Sizes
// are in viewBox units; CSS sets the rendered size. Colours come from classes in dashboard.css.
import { h } from './dom.js';

/**
 * Bars, one per value (oldest first), scaled to the largest; `failed` (same length) is drawn over
 * the bottom of each bar in the failure colour. The last bar (the bucket still filling) is lighter.
 */
export function sparkBars(values, failed = [], { width = 120, height = 28, title = '' } = {}) {
  const max = Math.max(1, ...values.map((v, i) => v + (failed[i] ?? 0)));
  const step = width / Math.max(1, values.length);
  const bars = values.flatMap((value, i) => {
    const x = i * step + 1;
    const w = Math.max(1, step - 2);
    const fail = failed[i] ?? 0;
    const okHeight = (value / max) * (height - 2);
    const failHeight = (fail / max) * (height - 2);
    const partial = i === values.length - 1 ? ' partial' : '';
    return [
      fail > 0 ? h('svg:rect', { x, y: height - failHeight, width: w, height: failHeight, class: `spark-fail${partial}` }) : null,
      value > 0 ? h('svg:rect', { x, y: height - failHeight - okHeight, width: w, height: okHeight, class: `spark-ok${partial}` }) : null,
    ];
  });
  return h(
    'svg:svg',
    { viewBox: `0 0 ${width} ${height}`, class: 'sparkline', role: 'img', 'aria-label': title, preserveAspectRatio: 'none' },
    h('svg:title', {}, title),
    h('svg:line', { x1: 0, x2: width, y1: height - 0.5, y2: height - 0.5, class: 'spark-axis' }),
    bars,
  );
}

/** A horizontal bar split into shares of `counts`, segment i with class `seg-i`; empty when all are 0. */
export function stackedBar(counts, labels, { width = 120, height = 12 } = {}) {
  const total = counts.reduce((a, b) => a + b, 0);
  let x = 0;
  const segments = counts.map((count, i) => {
    if (count === 0) return null;
    const w = (count / total) * width;
    const rect = h('svg:rect', { x, y: 0, width: w, height, class: `seg-${i}` }, h('svg:title', {}, `${labels[i]}: ${count}`));
    x += w;
    return rect;
  });
  return h(
    'svg:svg',
    { viewBox: `0 0 ${width} ${height}`, class: 'stacked', role: 'img', preserveAspectRatio: 'none', 'aria-label': counts.map((c, i) => `${labels[i]} ${c}`).join(', ') },
    total === 0 ? h('svg:rect', { x: 0, y: 0, width, height, class: 'seg-empty' }) : segments,
  );
}
