// The context-window and cost curve, drawn by uPlot (loaded on demand).
import uPlot from '../vendor/uPlot.esm.js';
import { fmtClock } from '../lib/format.js';

/**
 * contextChart draws the context points (model.js contextPoints: statusLine
 * snapshots and the context resumes began with) into el and returns the
 * plot.
 */
export function contextChart(el, snaps) {
  const pts = snaps.filter((s) => Number.isFinite(s.t)).sort((a, b) => a.t - b.t);
  const xs = pts.map((s) => s.t / 1000);
  const pct = pts.map((s) => (Number.isFinite(s.pct) ? s.pct : null));
  const cost = pts.map((s) => (Number.isFinite(s.cost) ? s.cost : null));
  const tokens = pts.map((s) => (Number.isFinite(s.tokens) ? s.tokens : null));
  const width = Math.max(320, el.clientWidth || 800);
  const opts = {
    width,
    height: 240,
    legend: { live: true },
    cursor: { drag: { x: true, y: false } },
    scales: { x: { time: true }, pct: { range: [0, 100] }, usd: { range: (u, lo, hi) => [0, Math.max(0.01, hi * 1.1)] }, tok: { range: (u, lo, hi) => [0, Math.max(1, hi * 1.1)] } },
    series: [
      // The cursor's time reads as the Events tab's: a 24-hour clock to the
      // millisecond, not uPlot's 12/3/26 9:35:17.123am.
      { value: (u, v) => (v == null ? '–' : fmtClock(v * 1000, true)) },
      { label: 'context used %', scale: 'pct', stroke: '#2563eb', width: 2, fill: 'rgba(37,99,235,0.08)', value: (u, v) => (v == null ? '–' : v.toFixed(1) + '%') },
      { label: 'cost USD', scale: 'usd', stroke: '#ea580c', width: 2, value: (u, v) => (v == null ? '–' : '$' + v.toFixed(3)) },
      { label: 'context tokens', scale: 'tok', stroke: '#7c3aed', width: 1, spanGaps: true, points: { show: true, size: 6 }, value: (u, v) => (v == null ? '–' : Math.round(v).toLocaleString()) },
    ],
    axes: [
      // The time axis reads as the timeline's (09:35:17, 09:35:17.500 when
      // its ticks are closer than a second) rather than uPlot's :17.500 and
      // 12/3/26 9:35am, and leaves room between ticks for a label to the
      // millisecond.
      { space: 100, values: (u, splits, axis, space, incr) => splits.map((v) => fmtClock(v * 1000, incr < 1)) },
      { scale: 'pct', values: (u, vals) => vals.map((v) => v + '%'), size: 50 },
      { scale: 'usd', side: 1, values: (u, vals) => vals.map((v) => '$' + v.toFixed(2)), grid: { show: false }, size: 60 },
    ],
  };
  const plot = new uPlot(opts, [xs, pct, cost, tokens], el);
  const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(320, el.clientWidth), height: 240 }));
  ro.observe(el);
  const destroy = plot.destroy.bind(plot);
  plot.destroy = () => { ro.disconnect(); destroy(); };
  return plot;
}
