// The timeline: the agent tree on the left, one lane per agent on a canvas
// on the right. A canvas, not SVG or DOM, because a session of 20,000
// events has ~10,000 bars: drawing only what is in view takes a few
// milliseconds per frame, where as many DOM nodes would take seconds to lay
// out. Text drawn on a canvas is pixels, so payload text cannot inject
// anything here either.
import { html, useEffect, useRef, useState, useLayoutEffect, useMemo, revealBidi } from '../lib/html.js';
import { MAIN, callMatches, markerMatches, narrowsLanes, agentEnd, durationOf, callStatusLabel } from '../lib/model.js';
import { familyColor, fmtDur, fmtClock, plural, shortID, truncate, STATUS_COLORS, EFFECT_COLORS } from '../lib/format.js';

const ROW_H = 12;
const ROW_GAP = 2;
const LANE_PAD = 11;
const MIN_LANE = 38;
const AXIS_H = 26;

// MIN_BAR is the width in CSS pixels a call shorter than that is drawn
// with, so that it reads as a call; BAR_GAP the room it leaves before the
// next call of its row, so that short calls side by side stay apart.
const MIN_BAR = 5;
const BAR_GAP = 1;

/**
 * barWidth returns the width in CSS pixels of a call's bar: its span (its
 * duration at the view's scale), widened to MIN_BAR when shorter, but not
 * up to BAR_GAP from the next bar of its row, next pixels to its right
 * (Infinity when none); never less than its span or 2.
 */
export function barWidth(span, next) {
  return Math.max(span, 2, Math.min(MIN_BAR, next - BAR_GAP));
}

// OVERFLOW_H is the height of the "+N" marks of stacked calls, in a lane's bottom padding.
const OVERFLOW_H = 10;

/** overflowLabel is the mark of a lane's stacked calls; overflowWidth its width in CSS pixels. */
const overflowLabel = (o) => '+' + o.n;
const overflowWidth = (o) => 8 + 6 * overflowLabel(o).length;

// HINT is the toolbar's reminder of the keys and gestures; the toolbar cuts
// it short on a narrow screen, its tooltip keeps it whole.
const HINT = 'drag: pan · ctrl+wheel: zoom · arrows: calls, Enter: open';

/** laneHeight returns the height of an agent's lane in CSS pixels. */
export function laneHeight(a) {
  return Math.max(MIN_LANE, LANE_PAD * 2 + a.rows * ROW_H + (a.rows - 1) * ROW_GAP);
}

/**
 * agentLabel names an agent for people: main, the name its client shows for
 * it (Codex's nickname: every Codex subagent's type is "default"), its type,
 * or the compaction agent.
 */
export function agentLabel(a) {
  if (a.id === MAIN) return 'main';
  if (a.nickname) return a.nickname;
  if (a.type === '') return 'compaction';
  return a.type || 'subagent';
}

const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3];

function niceStep(msPerPx, minPx) {
  for (const s of STEPS) if (s / msPerPx >= minPx) return s;
  return STEPS[STEPS.length - 1];
}

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

function readTheme() {
  return {
    bg: cssVar('--panel', '#fff'),
    alt: cssVar('--lane-alt', '#f7f8fa'),
    alive: cssVar('--lane-alive', '#e9eef5'),
    grid: cssVar('--grid', '#e5e7eb'),
    text: cssVar('--text', '#111827'),
    muted: cssVar('--muted', '#6b7280'),
    sel: cssVar('--sel', '#111827'),
    focus: cssVar('--accent', '#2563eb'),
    prompt: '#2563eb',
    compact: '#9333ea',
    background: 'rgba(124,58,237,0.22)',
    notified: '#7c3aed',
  };
}

// laneGeometry returns the lanes with their vertical offsets, for drawing
// and hit testing. The agent filter keeps the agent it picks, even empty,
// and the lanes of its ancestors (its parent, grandparent… by the layout's
// tree) as context (context: true), so that the agent reads as the end of
// its chain rather than as a row indented under nothing. Under a filter
// that narrows what lanes hold (narrowsLanes), a lane left with no call
// and no marker to draw is empty: an empty agent with a lane shown below it
// in the tree keeps its lane as context the same way; hidden counts the
// other empty lanes, left out unless showEmpty.
function laneGeometry(order, filters, markers, showEmpty) {
  let marked = null;
  if (filters.agent == null && narrowsLanes(filters)) {
    marked = new Set();
    for (const mk of markers) if (markerMatches(mk, filters)) marked.add(mk.agent);
  }
  const empty = (a) => marked && !marked.has(a.id) && nextShown(a.calls, 0, 1, filters) < 0;
  // The ancestors of the agents with something to show, by the layout's
  // tree (parentId).
  const context = new Set();
  const byID = new Map(order.map((a) => [a.id, a]));
  const above = (a) => {
    for (let p = byID.get(a.parentId); p && p !== a && !context.has(p.id); p = byID.get(p.parentId)) context.add(p.id);
  };
  if (filters.agent != null) {
    const a = byID.get(filters.agent);
    if (a) above(a);
  } else if (marked) {
    for (const a of order) if (!empty(a)) above(a);
  }
  const lanes = [];
  let y = 0, hidden = 0;
  for (const a of order) {
    let kept = false;
    if (filters.agent != null) {
      if (a.id !== filters.agent) {
        if (!context.has(a.id)) continue;
        kept = true;
      }
    } else if (empty(a)) {
      if (context.has(a.id)) kept = true;
      else {
        hidden++;
        if (!showEmpty) continue;
      }
    }
    const h = laneHeight(a);
    lanes.push(kept ? { a, y, h, context: true } : { a, y, h });
    y += h;
  }
  return { lanes, height: y, hidden };
}

function laneAt(lanes, y) {
  let lo = 0, hi = lanes.length - 1;
  while (lo <= hi) {
    const m = (lo + hi) >> 1;
    const l = lanes[m];
    if (y < l.y) hi = m - 1;
    else if (y >= l.y + l.h) lo = m + 1;
    else return l;
  }
  return null;
}

// firstFrom returns the index of the first call of a (sorted by start)
// that may reach into the view starting at t0.
function firstFrom(calls, t0) {
  let lo = 0, hi = calls.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (calls[m].start < t0) lo = m + 1; else hi = m;
  }
  return lo;
}

// nextShown returns the index of the first call of calls, from i on going
// dir (1 or -1), i included, that is drawn (a time) and that the filters
// keep; -1 when none.
function nextShown(calls, i, dir, f) {
  for (; i >= 0 && i < calls.length; i += dir) {
    const c = calls[i];
    if (Number.isFinite(c.start) && callMatches(c, f)) return i;
  }
  return -1;
}

// nearestShown returns the index of the call of calls (sorted by start)
// that nextShown would find whose start is nearest t; -1 when none.
function nearestShown(calls, t, f) {
  const i = firstFrom(calls, t);
  const a = nextShown(calls, i, 1, f), b = nextShown(calls, i - 1, -1, f);
  if (a < 0 || b < 0) return a < 0 ? b : a;
  return calls[a].start - t <= t - calls[b].start ? a : b;
}

// indexOfCall returns the index of c in calls (sorted by start), -1 when
// absent: a search by its start, not a scan of the lane.
function indexOfCall(calls, c) {
  for (let i = firstFrom(calls, c.start); i < calls.length && !(calls[i].start > c.start); i++) if (calls[i] === c) return i;
  return calls.indexOf(c);
}

// rowsTop is the y of the first row of lane l's calls: its rows centred
// in the lane, at least LANE_PAD below its top.
function rowsTop(l) {
  const a = l.a;
  return l.y + Math.max(LANE_PAD, (l.h - (a.rows * ROW_H + (a.rows - 1) * ROW_GAP)) / 2);
}

// callTop is the y of the top of call c's bar in its lane l.
function callTop(l, c) {
  return rowsTop(l) + (c.row || 0) * (ROW_H + ROW_GAP);
}

// CALL_KEYS are the keys that move the keyboard's highlight from call to
// call (Timeline): along a lane, to the lanes above and below, to a lane's
// ends.
const CALL_KEYS = new Set(['ArrowRight', 'ArrowLeft', 'ArrowDown', 'ArrowUp', 'Home', 'End']);

// VIEW_KEYS are the keys that zoom, pan or fit the timeline (lower case).
const VIEW_KEYS = new Set(['w', '+', '=', 's', '-', 'a', 'd', '0', 'f']);

const MARKER_GLYPH = { prompt: 'prompt', stop: 'stop', compact: 'compaction', start: 'session start', end: 'session end', notify: 'notification', ask: 'permission asked', stopfail: 'stop failure' };

/**
 * Timeline renders the agent tree and the lanes. selected is
 * {kind:'call', id} | {kind:'event', seq} | {kind:'agent', id} | null.
 */
export function Timeline({ model, version, filters, selected, onSelect, focusOn }) {
  const scrollRef = useRef(null);
  const canvasRef = useRef(null);
  const axisRef = useRef(null);
  const holderRef = useRef(null);
  const view = useRef({ t0: 0, t1: 1, fit: true });
  const geo = useRef({ lanes: [], height: 0 });
  // The widths the last frame drew the calls' bars with, in ms by call id
  // (barWidth): what hit testing and rectOf take a bar to span.
  const drawnW = useRef(new Map());
  const props = useRef({});
  const [hover, setHover] = useState(null);
  const [, force] = useState(0);
  const frame = useRef(0);
  // The call the keyboard highlights (id), drawn with a ring while the
  // timeline has the focus when the keys put it there (keyed); a click on
  // a call leaves it there unringed, for the keys to go on from.
  const kb = useRef({ id: null, keyed: false, focused: false });
  // What the live region says of the highlighted call.
  const [said, setSaid] = useState('');

  // Whether the lanes a filter leaves empty are shown all the same.
  const [showEmpty, setShowEmpty] = useState(false);

  const lay = model.layout();
  // A new layout comes with every change of the model (its version).
  const g = useMemo(() => laneGeometry(lay.order, filters, model.markers, showEmpty), [lay, filters, showEmpty]);
  geo.current = g;
  props.current = { model, filters, selected, onSelect };

  const fitView = () => {
    const [s, e] = model.span();
    const pad = Math.max((e - s) * 0.01, 5);
    view.current = { t0: s - pad, t1: e + pad, fit: true };
  };
  if (view.current.fit) fitView();

  const draw = () => {
    frame.current = 0;
    const canvas = canvasRef.current, axis = axisRef.current, scroll = scrollRef.current, holder = holderRef.current;
    if (!canvas || !scroll || !holder) return;
    const { model: m, filters: f, selected: sel } = props.current;
    if (view.current.fit) fitView();
    const dpr = window.devicePixelRatio || 1;
    const W = holder.clientWidth;
    const H = scroll.clientHeight;
    if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) {
      canvas.width = Math.round(W * dpr);
      canvas.height = Math.round(H * dpr);
      canvas.style.width = W + 'px';
      canvas.style.height = H + 'px';
    }
    const th = readTheme();
    const hiID = kb.current.keyed && kb.current.focused ? kb.current.id : null;
    const { t0, t1 } = view.current;
    const scale = W / (t1 - t0);
    const X = (t) => (t - t0) * scale;
    const top = scroll.scrollTop;
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = th.bg;
    ctx.fillRect(0, 0, W, H);
    const step = niceStep(1 / scale, 90);

    // Lane backgrounds, agent lifetimes.
    const { lanes } = geo.current;
    const visible = lanes.filter((l) => l.y + l.h >= top && l.y <= top + H);
    for (const l of visible) {
      const y = l.y - top;
      const i = lanes.indexOf(l);
      if (i % 2) { ctx.fillStyle = th.alt; ctx.fillRect(0, y, W, l.h); }
      const a = l.a;
      // A lane kept as context (laneGeometry) draws its life faintly.
      ctx.globalAlpha = l.context ? 0.4 : 1;
      if (Number.isFinite(a.start)) {
        const s = Math.max(0, X(a.start));
        const e = Math.min(W, X(agentEnd(a, m.t1)));
        if (e > s) {
          ctx.fillStyle = th.alive;
          ctx.fillRect(s, y + 3, Math.max(1, e - s), l.h - 6);
        }
        // A background subagent runs on after its spawning call returned:
        // that stretch of its lane is hatched, and the client's task
        // notification of its end is a tick.
        const bg = backgroundSpan(a, m);
        if (bg) {
          const bs = Math.max(0, X(bg[0])), be = Math.min(W, X(bg[1]));
          if (be > bs) {
            ctx.save();
            ctx.beginPath();
            ctx.rect(bs, y + 3, be - bs, l.h - 6);
            ctx.clip();
            ctx.strokeStyle = th.background;
            ctx.lineWidth = 3;
            for (let sx = bs - l.h; sx < be; sx += 8) {
              ctx.beginPath(); ctx.moveTo(sx, y + l.h); ctx.lineTo(sx + l.h, y); ctx.stroke();
            }
            ctx.restore();
          }
        }
        if (Number.isFinite(a.notifiedAt)) {
          const nx = Math.round(X(a.notifiedAt)) + 0.5;
          if (nx >= 0 && nx <= W) {
            ctx.fillStyle = th.notified;
            ctx.beginPath(); ctx.moveTo(nx, y + l.h - 11); ctx.lineTo(nx + 4, y + l.h - 6); ctx.lineTo(nx, y + l.h - 1); ctx.lineTo(nx - 4, y + l.h - 6); ctx.fill();
          }
        }
      }
      ctx.globalAlpha = 1;
      ctx.fillStyle = th.grid;
      ctx.fillRect(0, y + l.h - 1, W, 1);
    }
    // Time grid.
    ctx.fillStyle = th.grid;
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ctx.fillRect(Math.round(X(t)), 0, 1, H);

    // Spawn connectors: from the call that spawned a subagent to its lane.
    const yOf = new Map(lanes.map((l) => [l.a.id, l]));
    ctx.strokeStyle = 'rgba(120,120,140,0.55)';
    ctx.lineWidth = 1;
    ctx.setLineDash([3, 3]);
    for (const l of lanes) {
      const a = l.a;
      if (!a.spawn) continue;
      const c = m.calls.get(a.spawn);
      const pl = c && yOf.get(c.agent);
      if (!pl) continue;
      const x = Math.round(X(Number.isFinite(a.start) ? a.start : c.start)) + 0.5;
      if (x < 0 || x > W) continue;
      const y1 = pl.y - top + LANE_PAD + (c.row || 0) * (ROW_H + ROW_GAP) + ROW_H;
      const y2 = l.y - top + l.h / 2;
      if (Math.max(y1, y2) < 0 || Math.min(y1, y2) > H) continue;
      ctx.beginPath();
      ctx.moveTo(x, y1);
      ctx.lineTo(x, y2);
      ctx.stroke();
    }
    ctx.setLineDash([]);

    // Calls.
    ctx.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
    ctx.textBaseline = 'middle';
    let selRect = null, hiRect = null;
    const selID = sel && sel.kind === 'call' ? sel.id : null;
    // The width each bar is drawn with (barWidth), in ms, for hit testing
    // and rectOf until the next frame.
    const widths = new Map();
    const drawBar = (c, x, w, y) => {
      widths.set(c.id, w / scale);
      if (c.status === 'denied') {
        ctx.strokeStyle = STATUS_COLORS.denied;
        ctx.lineWidth = 2;
        const cx = x + 1, cy = y + ROW_H / 2;
        ctx.beginPath();
        ctx.moveTo(cx - 4, cy - 4); ctx.lineTo(cx + 4, cy + 4);
        ctx.moveTo(cx + 4, cy - 4); ctx.lineTo(cx - 4, cy + 4);
        ctx.stroke();
      } else {
        ctx.fillStyle = familyColor(c.subtype || c.family);
        ctx.fillRect(x, y, w, ROW_H);
        if (c.effect === 'destructive') {
          // What cannot be undone stands out whatever its subtype.
          ctx.fillStyle = EFFECT_COLORS.destructive;
          ctx.fillRect(x, y, w, 2);
        }
        if (c.failed || c.status === 'rejected') {
          ctx.fillStyle = STATUS_COLORS[c.status];
          ctx.fillRect(x, y + ROW_H - 3, w, 3);
          ctx.fillRect(x, y, Math.min(w, 3), ROW_H);
          if (c.status === 'rejected') {
            // Rejected before running: a zero-length call, drawn as a red tick with a cap.
            ctx.fillRect(x - 2, y, Math.min(w, 3) + 4, 2);
          }
        } else if (m.noOutcome(c)) {
          // The session ended without the call's outcome: not running,
          // so not striped; faded, with its last edge open.
          ctx.fillStyle = 'rgba(255,255,255,0.6)';
          ctx.fillRect(x, y, w, ROW_H);
          ctx.fillStyle = th.muted;
          for (let sy = y; sy < y + ROW_H; sy += 4) ctx.fillRect(x + w - 1, sy, 1, 2);
        } else if (c.status === 'pending') {
          ctx.fillStyle = 'rgba(255,255,255,0.45)';
          for (let sx = x; sx < x + w; sx += 6) ctx.fillRect(sx, y, 2, ROW_H);
        }
        // A stacked call's name would be written over another's.
        if (w > 34 && !c.stacked) {
          const chars = Math.floor((w - 6) / 6.3);
          ctx.fillStyle = '#fff';
          // Drawn, not rendered by a view: its bidi controls revealed here.
          ctx.fillText(truncate(revealBidi(c.tool), Math.max(2, chars)), x + 4, y + ROW_H / 2 + 0.5);
        }
      }
      if (c.id === selID) selRect = [x, y, w, ROW_H];
      if (c.id === hiID) hiRect = [x, y, w, ROW_H];
    };
    for (const l of visible) {
      const a = l.a;
      const calls = a.calls;
      const y0 = rowsTop(l) - top;
      let lastX = -1, lastRowY = -1;
      // A bar is drawn once the next bar of its row is placed, which its
      // width may not reach (barWidth); the last of each row at the end.
      const pending = new Map();
      for (let i = firstFrom(calls, t0 - Math.max(a.maxDur, MIN_BAR / scale) - 1); i < calls.length; i++) {
        const c = calls[i];
        if (c.start > t1) break;
        if (!callMatches(c, f)) continue;
        // A call stacked over another for want of rows is counted by the
        // lane's +N, and drawn only when it failed or was denied (which must
        // stay in sight) or is selected.
        if (c.stacked && !c.failed && c.status !== 'denied' && c.status !== 'rejected' && c.id !== selID && c.id !== hiID) continue;
        const e = m.callEnd(c);
        if (e < t0) continue;
        const x = X(c.start);
        const span = X(e) - x;
        const y = y0 + c.row * (ROW_H + ROW_GAP);
        // Thousands of sub-pixel calls in one spot draw as one.
        if (span <= 2 && Math.abs(x - lastX) < 0.5 && y === lastRowY && c.status === 'ok' && c.id !== selID && c.id !== hiID) continue;
        lastX = x; lastRowY = y;
        const prev = pending.get(c.row);
        if (prev) drawBar(prev.c, prev.x, barWidth(prev.span, x - prev.x), prev.y);
        pending.set(c.row, { c, x, span, y });
      }
      for (const p of pending.values()) drawBar(p.c, p.x, barWidth(p.span, Infinity), p.y);
      // Calls stacked over others for want of rows: a "+N" where they
      // are, which opens every row of the lane.
      if (a.overflow && a.overflow.length) {
        ctx.font = 'bold 9px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
        const by = l.y - top + l.h - OVERFLOW_H - 1;
        for (const o of a.overflow) {
          if (o.end < t0 || o.start > t1) continue;
          const bx = Math.round(X(o.start)), bw = overflowWidth(o);
          ctx.fillStyle = th.text;
          ctx.fillRect(bx, by, bw, OVERFLOW_H);
          ctx.fillStyle = th.bg;
          ctx.fillText(overflowLabel(o), bx + 4, by + OVERFLOW_H / 2 + 0.5);
        }
        ctx.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
      }
    }
    drawnW.current = widths;
    const ms = m.markers;
    let lo = 0, hi = ms.length;
    while (lo < hi) { const k = (lo + hi) >> 1; if (ms[k].t < t0) lo = k + 1; else hi = k; }
    for (let i = lo; i < ms.length && ms[i].t <= t1; i++) {
      const mk = ms[i];
      if (!markerMatches(mk, f)) continue;
      const l = yOf.get(mk.agent);
      if (!l) continue;
      const y = l.y - top;
      if (y + l.h < 0 || y > H) continue;
      const x = Math.round(X(mk.t)) + 0.5;
      drawMarker(ctx, mk.kind, x, y, l.h, th, H, top);
      if (sel && sel.kind === 'event' && sel.seq === mk.seq) selRect = [x - 5, y + 1, 10, l.h - 2];
    }
    if (selRect) {
      ctx.strokeStyle = th.sel;
      ctx.lineWidth = 2;
      ctx.strokeRect(selRect[0] - 1.5, selRect[1] - 1.5, selRect[2] + 3, selRect[3] + 3);
    }
    if (hiRect) {
      // The keyboard's highlight: a dashed ring outside the selection's.
      ctx.strokeStyle = th.focus;
      ctx.lineWidth = 2;
      ctx.setLineDash([4, 2]);
      ctx.strokeRect(hiRect[0] - 4, hiRect[1] - 4, hiRect[2] + 8, hiRect[3] + 8);
      ctx.setLineDash([]);
    }

    // Axis.
    if (axis) {
      if (axis.width !== Math.round(W * dpr)) {
        axis.width = Math.round(W * dpr);
        axis.height = Math.round(AXIS_H * dpr);
        axis.style.width = W + 'px';
        axis.style.height = AXIS_H + 'px';
      }
      const ax = axis.getContext('2d');
      ax.setTransform(dpr, 0, 0, dpr, 0, 0);
      ax.clearRect(0, 0, W, AXIS_H);
      ax.fillStyle = th.bg;
      ax.fillRect(0, 0, W, AXIS_H);
      ax.fillStyle = th.grid;
      ax.fillRect(0, AXIS_H - 1, W, 1);
      ax.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
      ax.textBaseline = 'middle';
      // A label starts just after its tick, or ends at the canvas's edge
      // when it would run past it (a tick near the end of the view); one
      // that would then run into the label before it is left out.
      let labelEnd = -Infinity;
      for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
        const x = Math.round(X(t));
        ax.fillStyle = th.grid;
        ax.fillRect(x, AXIS_H - 7, 1, 6);
        const label = fmtClock(t, step < 1000);
        const w = ax.measureText(label).width;
        const lx = Math.max(0, Math.min(x + 3, W - w - 2));
        if (lx < labelEnd + 6) continue;
        ax.fillStyle = th.muted;
        ax.fillText(label, lx, AXIS_H / 2 - 2);
        labelEnd = lx + w;
      }
    }
    // Render milestones, read by the browser tests and the benchmark.
    const hw = (window.__hw = window.__hw || {});
    hw.drawn = (hw.drawn || 0) + 1;
    if (!hw.firstRender && m.calls.size) {
      hw.firstRender = performance.now();
      performance.mark('hw:first-render');
    }
    if (!hw.modelRender && hw.modelLoading === false && hw.model === m) {
      hw.modelRender = performance.now();
      performance.mark('hw:model-render');
    }
    if (!hw.loadedRender && hw.loading === false && hw.model === m) {
      hw.loadedRender = performance.now();
      performance.mark('hw:loaded-render');
    }
  };

  const request = () => {
    if (!frame.current) frame.current = requestAnimationFrame(draw);
  };

  // reveal scrolls the lanes, no further than it must, to show call c of
  // lane l: its whole lane when the lane fits the room, else the call's row
  // and the lane's padding around it. Every way to a call goes through it:
  // focus, the keyboard, the selection kept in sight, the tests' rectOf.
  const reveal = (l, c) => {
    const scroll = scrollRef.current;
    if (!scroll) return;
    const y = callTop(l, c);
    const [from, to] = l.h <= scroll.clientHeight ? [l.y, l.y + l.h] : [y - LANE_PAD, y + ROW_H + LANE_PAD];
    if (to > scroll.scrollTop + scroll.clientHeight) scroll.scrollTop = to - scroll.clientHeight;
    if (from < scroll.scrollTop) scroll.scrollTop = Math.max(0, from);
  };

  // keepSelected scrolls the selected call's bar back into view when the
  // lanes' room shrinks under it: on a narrow screen the details open under
  // the timeline (style.css), taking the bottom of its room.
  const keepSelected = () => {
    const { model: m, selected: sel } = props.current;
    if (!sel || sel.kind !== 'call') return;
    const c = m.calls.get(sel.id);
    const l = c && geo.current.lanes.find((x) => x.a.id === c.agent);
    if (l) reveal(l, c);
  };

  // Redraw on every render (model version, filters, selection) and resize.
  useLayoutEffect(() => { request(); });
  useEffect(() => {
    const ro = new ResizeObserver(() => { keepSelected(); request(); });
    if (holderRef.current) ro.observe(holderRef.current);
    if (scrollRef.current) ro.observe(scrollRef.current);
    return () => { ro.disconnect(); cancelAnimationFrame(frame.current); frame.current = 0; };
  }, []);

  const zoom = (factor, atX) => {
    const holder = holderRef.current;
    if (!holder) return;
    const W = holder.clientWidth;
    const { t0, t1 } = view.current;
    const at = t0 + (t1 - t0) * (atX == null ? 0.5 : atX / W);
    const span = Math.max(2, (t1 - t0) * factor);
    const [s, e] = model.span();
    const maxSpan = (e - s) * 1.5 + 1000;
    const ns = Math.min(span, maxSpan);
    const r = (at - t0) / (t1 - t0);
    view.current = { t0: at - ns * r, t1: at - ns * r + ns, fit: false };
    request();
    force((x) => x + 1);
  };
  const pan = (dxPx) => {
    const holder = holderRef.current;
    if (!holder) return;
    const { t0, t1 } = view.current;
    const dt = (dxPx / holder.clientWidth) * (t1 - t0);
    view.current = { t0: t0 + dt, t1: t1 + dt, fit: false };
    request();
  };

  // focus zooms to a call with some context around it and scrolls its lane into view.
  const focus = (id) => {
    const c = model.calls.get(id);
    if (!c || !Number.isFinite(c.start)) return false;
    const e = model.callEnd(c);
    const pad = Math.max((e - c.start) * 4, 1500);
    view.current = { t0: c.start - pad, t1: e + pad, fit: false };
    const l = geo.current.lanes.find((x) => x.a.id === c.agent);
    if (l) reveal(l, c);
    request();
    force((x) => x + 1);
    return true;
  };
  useEffect(() => {
    if (focusOn) focus(focusOn.id);
  }, [focusOn]);

  // Test and benchmark hook: where a call's bar is drawn, in page pixels.
  useEffect(() => {
    window.__hw = window.__hw || {};
    window.__hw.timeline = {
      // The call the keyboard highlights, null when none.
      highlighted: () => (kb.current.keyed ? kb.current.id : null),
      rectOf(id) {
        const c = model.calls.get(id);
        const canvas = canvasRef.current, scroll = scrollRef.current;
        if (!c || !canvas || !scroll) return null;
        const l = geo.current.lanes.find((x) => x.a.id === c.agent);
        if (!l) return null;
        const a = l.a;
        const W = canvas.clientWidth;
        const { t0, t1 } = view.current;
        const scale = W / (t1 - t0);
        reveal(l, c);
        const y0 = callTop(l, c);
        const box = canvas.getBoundingClientRect();
        const x = (c.start - t0) * scale;
        const w = Math.max(2, (model.callEnd(c) - c.start) * scale, (drawnW.current.get(id) ?? 0) * scale);
        return { x: box.left + x, y: box.top + y0 - scroll.scrollTop, w, h: ROW_H };
      },
      lanes: () => geo.current.lanes.map((l) => ({ agent: l.a.id, type: l.a.type, context: l.context === true, y: l.y, h: l.h, calls: l.a.calls.filter((c) => callMatches(c, props.current.filters)).length,
        rows: l.a.rows, stacked: l.a.stacked, overflow: l.a.overflow,
        start: l.a.start, end: agentEnd(l.a, model.t1), background: backgroundSpan(l.a, model) })),
      view: () => ({ ...view.current }),
      zoom, pan, focus,
      // Where a lane's "+N" marks are drawn, in page pixels.
      overflowRects(agent) {
        const l = geo.current.lanes.find((x) => x.a.id === agent);
        const canvas = canvasRef.current, scroll = scrollRef.current;
        if (!l || !canvas || !scroll || !l.a.overflow) return [];
        const box = canvas.getBoundingClientRect();
        const { t0, t1 } = view.current;
        const scale = canvas.clientWidth / (t1 - t0);
        return l.a.overflow.map((o) => ({ n: o.n, x: box.left + Math.round((o.start - t0) * scale), y: box.top + l.y - scroll.scrollTop + l.h - OVERFLOW_H - 1, w: overflowWidth(o), h: OVERFLOW_H }));
      },
    };
  });

  const hit = (clientX, clientY) => {
    const canvas = canvasRef.current, scroll = scrollRef.current;
    if (!canvas || !scroll) return null;
    const box = canvas.getBoundingClientRect();
    const px = clientX - box.left, py = clientY - box.top + scroll.scrollTop;
    const l = laneAt(geo.current.lanes, py);
    if (!l) return null;
    const { t0, t1 } = view.current;
    const scale = box.width / (t1 - t0);
    const { model: m, filters: f } = props.current;
    const a = l.a;
    // The "+N" marks of stacked calls, in the lane's bottom padding.
    if (a.overflow && a.overflow.length && py >= l.y + l.h - OVERFLOW_H - 1 && py < l.y + l.h - 1) {
      for (const o of a.overflow) {
        const bx = Math.round((o.start - t0) * scale);
        if (px >= bx && px <= bx + overflowWidth(o)) return { kind: 'overflow', agent: a.id, overflow: o };
      }
    }
    // Markers first: they are small and drawn on top.
    let best = null, bestD = 6;
    for (const mk of m.markers) {
      if (mk.agent !== a.id || !markerMatches(mk, f)) continue;
      const d = Math.abs((mk.t - t0) * scale - px);
      if (d < bestD && py - l.y < 12) { best = { kind: 'event', seq: mk.seq, marker: mk }; bestD = d; }
    }
    if (best) return best;
    const y0 = rowsTop(l);
    const row = Math.floor((py - y0) / (ROW_H + ROW_GAP));
    const t = t0 + px / scale;
    const slack = 4 / scale;
    let bestC = null, bestDist = Infinity;
    for (let i = firstFrom(a.calls, t - Math.max(a.maxDur, MIN_BAR / scale) - slack - 1); i < a.calls.length; i++) {
      const c = a.calls[i];
      if (c.start > t + slack) break;
      if (!callMatches(c, f)) continue;
      if (row >= 0 && row < a.rows && c.row !== row) continue;
      const e = Math.max(m.callEnd(c), c.start + (drawnW.current.get(c.id) ?? 2 / scale));
      if (t < c.start - slack || t > e + slack) continue;
      const dist = t < c.start ? c.start - t : t > e ? t - e : 0;
      if (dist < bestDist || (dist === bestDist && bestC && e - c.start < m.callEnd(bestC) - bestC.start)) { bestC = c; bestDist = dist; }
    }
    if (bestC) return { kind: 'call', id: bestC.id, call: bestC };
    return null;
  };

  const drag = useRef(null);
  const onPointerDown = (e) => {
    if (e.button !== 0) return;
    drag.current = { x: e.clientX, moved: false };
    e.currentTarget.setPointerCapture(e.pointerId);
  };
  const onPointerMove = (e) => {
    if (drag.current) {
      const dx = e.clientX - drag.current.x;
      if (Math.abs(dx) > 3 || drag.current.moved) {
        drag.current.moved = true;
        drag.current.x = e.clientX;
        pan(-dx);
        setHover(null);
      }
      return;
    }
    const h = hit(e.clientX, e.clientY);
    const box = holderRef.current.getBoundingClientRect();
    setHover(h ? { ...h, x: e.clientX - box.left, y: e.clientY - box.top } : null);
  };
  const onPointerUp = (e) => {
    const d = drag.current;
    drag.current = null;
    if (d && !d.moved) {
      const h = hit(e.clientX, e.clientY);
      if (h && h.kind === 'overflow') {
        toggleRows(h.agent);
        return;
      }
      // The keys go on from the call clicked.
      if (h && h.kind === 'call') {
        kb.current.id = h.id;
        kb.current.keyed = false;
      }
      props.current.onSelect(h ? (h.kind === 'call' ? { kind: 'call', id: h.id } : { kind: 'event', seq: h.seq }) : null);
    }
  };
  const onWheel = (e) => {
    const box = holderRef.current.getBoundingClientRect();
    if (e.ctrlKey || e.metaKey || e.altKey) {
      e.preventDefault();
      zoom(Math.exp(e.deltaY * 0.002), e.clientX - box.left);
    } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      e.preventDefault();
      pan(e.shiftKey ? e.deltaY : e.deltaX);
    }
  };
  // The wheel listener must not be passive to take over ctrl+wheel.
  useEffect(() => {
    const el = holderRef.current;
    if (!el) return;
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, []);
  // stepCall returns the call a navigation key (CALL_KEYS) moves the
  // keyboard's highlight to, among the calls the timeline shows (their
  // lanes, the filters): ArrowRight and ArrowLeft the next and the
  // previous call of its lane, ArrowDown and ArrowUp the call nearest in
  // time in the next lane below or above that has one, Home and End the
  // first and the last of its lane. With none highlighted that the
  // timeline shows (none yet, or one a filter has since hidden), it starts
  // on the selected call, else Home and End on the first and the last call
  // of the first lane that shows one, the arrows on its first call in
  // view. The work is a search in a lane or two, per key.
  const stepCall = (key) => {
    const { model: m, filters: f, selected: sel } = props.current;
    const { lanes } = geo.current;
    const laneOf = (c) => (c && Number.isFinite(c.start) && callMatches(c, f) ? lanes.findIndex((l) => l.a.id === c.agent) : -1);
    let cur = kb.current.id ? m.calls.get(kb.current.id) : null;
    if (laneOf(cur) < 0) {
      cur = sel && sel.kind === 'call' ? m.calls.get(sel.id) : null;
      if (laneOf(cur) >= 0) return cur;
      for (const l of lanes) {
        const calls = l.a.calls;
        const last = nextShown(calls, calls.length - 1, -1, f);
        if (last < 0) continue;
        if (key === 'End') return calls[last];
        const i = key === 'Home' ? -1 : nextShown(calls, firstFrom(calls, view.current.t0), 1, f);
        return calls[i >= 0 ? i : nextShown(calls, 0, 1, f)];
      }
      return null;
    }
    const li = laneOf(cur);
    const calls = lanes[li].a.calls;
    const i = indexOfCall(calls, cur);
    if (key === 'ArrowDown' || key === 'ArrowUp') {
      const d = key === 'ArrowDown' ? 1 : -1;
      for (let k = li + d; k >= 0 && k < lanes.length; k += d) {
        const j = nearestShown(lanes[k].a.calls, cur.start, f);
        if (j >= 0) return lanes[k].a.calls[j];
      }
      return cur;
    }
    const j = key === 'ArrowRight' ? nextShown(calls, i + 1, 1, f)
      : key === 'ArrowLeft' ? nextShown(calls, i - 1, -1, f)
        : key === 'Home' ? nextShown(calls, 0, 1, f) : nextShown(calls, calls.length - 1, -1, f);
    return j >= 0 ? calls[j] : cur;
  };

  // highlight puts the keyboard's highlight on call c: the view pans
  // (keeping its zoom) and scrolls to show it, the live region describes
  // it, and its tip shows as on hover.
  const highlight = (c) => {
    const { model: m, filters: f } = props.current;
    kb.current.id = c.id;
    kb.current.keyed = true;
    const holder = holderRef.current, scroll = scrollRef.current;
    const l = geo.current.lanes.find((x) => x.a.id === c.agent);
    if (!holder || !scroll || !l) return;
    const { t0, t1 } = view.current;
    const span = t1 - t0;
    const e = m.callEnd(c);
    if (c.start < t0 || c.start > t1 || (e > t1 && e - c.start < span)) {
      const s0 = c.start - span / 4;
      view.current = { t0: s0, t1: s0 + span, fit: false };
    }
    reveal(l, c);
    const a = l.a;
    const y = callTop(l, c);
    const x = (c.start - view.current.t0) * (holder.clientWidth / (view.current.t1 - view.current.t0));
    setHover({ kind: 'call', id: c.id, call: c, x: Math.max(0, x), y: y + ROW_H, keyed: true });
    let n = 0, at = 0;
    for (const o of a.calls) {
      if (!Number.isFinite(o.start) || !callMatches(o, f)) continue;
      n++;
      if (o === c) at = n;
    }
    setSaid(describeCall(c, m, a, at, n));
    request();
  };

  // onKey: W and S zoom, A and D pan, F fits, the CALL_KEYS move from call
  // to call, and Enter or Space opens the call highlighted, as Enter and
  // Space open an agent of the tree and an event of the list.
  const onKey = (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key.toLowerCase();
    // The highlighted call's tip is where the call was: a key that moves
    // the view puts it away (the ring, drawn each frame, follows).
    if (VIEW_KEYS.has(k)) setHover((h) => (h && h.keyed ? null : h));
    if (k === 'w' || k === '+' || k === '=') zoom(0.7);
    else if (k === 's' || k === '-') zoom(1 / 0.7);
    else if (k === 'a') pan(-80);
    else if (k === 'd') pan(80);
    else if (k === '0' || k === 'f') { view.current.fit = true; request(); force((x) => x + 1); }
    else if (CALL_KEYS.has(e.key)) {
      const c = stepCall(e.key);
      if (!c) return;
      highlight(c);
    } else if (e.key === 'Enter' || e.key === ' ') {
      const id = kb.current.keyed ? kb.current.id : null;
      if (!id || !props.current.model.calls.has(id)) return;
      props.current.onSelect({ kind: 'call', id });
    } else return;
    e.preventDefault();
  };
  const onFocus = () => {
    kb.current.focused = true;
    request();
  };
  const onBlur = () => {
    kb.current.focused = false;
    setHover((h) => (h && h.keyed ? null : h));
    request();
  };

  const sel = selected;
  // toggleRows shows every row of an agent's lane, or MAX_ROWS again.
  function toggleRows(id) {
    model.toggleRows(id);
    setHover(null);
    force((x) => x + 1);
  }
  return html`
    <div class="timeline" data-testid="timeline">
      <div class="tl-tools">
        <button type="button" title="Zoom in (W, ctrl+wheel)" aria-label="Zoom in" onClick=${() => zoom(0.5)}>+</button>
        <button type="button" title="Zoom out (S)" aria-label="Zoom out" onClick=${() => zoom(2)}>−</button>
        <button type="button" title="Fit the whole session (F)" aria-label="Fit" class=${view.current.fit ? 'on' : ''} onClick=${() => { view.current.fit = true; request(); force((x) => x + 1); }}>fit</button>
        <span class="hint" title=${HINT}>${HINT}</span>
        <span class="spacer"></span>
        <${Legend} model=${model} version=${version} />
      </div>
      <div class="sr-only" role="status" data-testid="timeline-said">${said}</div>
      <div class="tl-head">
        <div class="tl-corner">agent <span class="muted">· calls · time</span></div>
        <div class="tl-axis"><canvas ref=${axisRef} aria-hidden="true"></canvas></div>
      </div>
      ${g.hidden > 0 && html`<div class="tl-hidden" data-testid="lanes-hidden">
        ${showEmpty ? `${plural(g.hidden, 'agent')} with no call or event that matches the filters` : `${plural(g.hidden, 'agent')} hidden: no call or event of theirs matches the filters`}
        <button type="button" class="link" onClick=${() => { setShowEmpty(!showEmpty); setHover(null); }}>${showEmpty ? 'hide them' : 'show them'}</button>
      </div>`}
      <div class="tl-scroll" ref=${scrollRef} onScroll=${request}>
        <div class="tl-inner" style=${{ height: g.height + 'px' }}>
          <div class="tl-tree" role="tree" aria-label="Agents">
            ${g.lanes.map((l) => html`<${AgentRow} key=${l.a.id} lane=${l} model=${model} selected=${sel && sel.kind === 'agent' && sel.id === l.a.id} onSelect=${onSelect} onRows=${toggleRows} />`)}
          </div>
          <div class="tl-canvas" ref=${holderRef} tabIndex="0" onKeyDown=${onKey} onFocus=${onFocus} onBlur=${onBlur}
            role="application" aria-roledescription="timeline"
            aria-label="Tool calls per agent over time: the arrow keys move from call to call, Home and End to a lane's first and last, Enter opens the call; W and S zoom, A and D pan, F fits"
            onPointerDown=${onPointerDown} onPointerMove=${onPointerMove} onPointerUp=${onPointerUp} onPointerLeave=${() => setHover((h) => (h && h.keyed ? h : null))}>
            <canvas ref=${canvasRef} aria-hidden="true"></canvas>
            ${hover && html`<${Tip} hover=${hover} model=${model} />`}
          </div>
        </div>
      </div>
    </div>`;
}

function drawMarker(ctx, kind, x, y, h, th) {
  switch (kind) {
    case 'prompt':
      ctx.fillStyle = th.prompt;
      ctx.fillRect(x - 0.5, y + 2, 1, h - 4);
      ctx.beginPath(); ctx.moveTo(x - 5, y + 1); ctx.lineTo(x + 5, y + 1); ctx.lineTo(x, y + 8); ctx.fill();
      break;
    case 'compact':
      ctx.fillStyle = th.compact;
      ctx.fillRect(x - 0.5, y, 1, h);
      ctx.beginPath(); ctx.moveTo(x, y + 1); ctx.lineTo(x + 5, y + 6); ctx.lineTo(x, y + 11); ctx.lineTo(x - 5, y + 6); ctx.fill();
      break;
    case 'stop':
      ctx.fillStyle = th.muted;
      ctx.fillRect(x - 3.5, y + 2, 7, 7);
      break;
    case 'stopfail':
      ctx.fillStyle = STATUS_COLORS.error;
      ctx.fillRect(x - 3.5, y + 2, 7, 7);
      break;
    case 'start': case 'end':
      ctx.fillStyle = kind === 'start' ? '#16a34a' : th.muted;
      ctx.fillRect(x - 1, y + 1, 2, h - 2);
      break;
    case 'ask':
      ctx.fillStyle = STATUS_COLORS.interrupted;
      ctx.beginPath(); ctx.arc(x, y + 5, 3.5, 0, Math.PI * 2); ctx.fill();
      break;
    default:
      ctx.fillStyle = '#ca8a04';
      ctx.beginPath(); ctx.arc(x, y + 5, 3, 0, Math.PI * 2); ctx.fill();
  }
}

/**
 * describeCall says what the keyboard highlights, for the timeline's live
 * region: the call's tool, status, duration and start, its agent a, what
 * it acted on, and its place (at of n) among the calls its lane shows.
 */
export function describeCall(c, model, a, at, n) {
  const parts = [c.tool || 'call', callStatusLabel(c, model)];
  const d = durationOf(c);
  if (Number.isFinite(d)) parts.push(fmtDur(d));
  parts.push('at ' + fmtClock(c.start, true));
  parts.push(`${agentLabel(a)} agent${a.id ? ' ' + shortID(a.id, 7) : ''}`);
  if (typeof c.entity === 'string' && c.entity) parts.push(truncate(c.entity, 120));
  parts.push(`call ${at} of ${n} in its lane; Enter opens it`);
  return parts.join(', ');
}

/**
 * backgroundSpan returns [from, to] for a background subagent that ran on
 * after its spawning call returned: from the call's end to the agent's
 * (its stop, or the session's last activity while it runs); else null.
 */
export function backgroundSpan(a, model) {
  if (!a.background || !a.spawn) return null;
  const c = model.calls.get(a.spawn);
  if (!c || !Number.isFinite(c.end)) return null;
  const to = agentEnd(a, model.t1);
  return to > c.end ? [c.end, to] : null;
}

// treeKey moves in the agent tree as in a tree: Enter or Space opens the
// agent, the arrow keys go to the next and the previous agent, Home and
// End to the first and the last.
function treeKey(e, open) {
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    open();
    return;
  }
  const items = [...e.currentTarget.parentElement.querySelectorAll(':scope > [role=treeitem]')];
  const i = items.indexOf(e.currentTarget);
  const j = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: items.length - 1 }[e.key];
  if (j === undefined || !items[j]) return;
  e.preventDefault();
  items[j].focus();
}

// CONTEXT_WHY says why a lane kept as context is shown.
const CONTEXT_WHY = 'shown for the agents below it: none of its calls or events matches the filters';

function AgentRow({ lane, model, selected, onSelect, onRows }) {
  const a = lane.a;
  const dur = agentEnd(a, model.t1) - a.start;
  const spawn = a.spawn ? model.calls.get(a.spawn) : null;
  const desc = a.description || (spawn && spawn.input && typeof spawn.input.description === 'string' ? spawn.input.description : '');
  // The collector's counts: failures (errors, interruptions) and, when it
  // counts them per agent, calls the client rejected.
  const failed = (a.failures ?? 0) + (a.rejected ?? 0);
  const sig = model.signals.get(a.id);
  // On a narrow screen the background badge is a swatch (style.css): its
  // tooltip says whether the agent still runs.
  const bgDone = Number.isFinite(a.stop) || model.over();
  // A lane kept as context (laneGeometry) is dimmed, and says why it is
  // there: nothing of its own matches the filters.
  const isContext = lane.context === true;
  const who = a.id ? `agent ${a.id}` : 'main agent';
  return html`
    <div class=${'agent' + (selected ? ' sel' : '') + (isContext ? ' context' : '')} role="treeitem" aria-level=${a.level + 1} data-agent=${a.id} data-type=${a.type ?? ''} data-calls=${a.calls.length} data-background=${a.background ? 'true' : 'false'}
      data-context=${isContext ? 'true' : 'false'} aria-description=${isContext ? CONTEXT_WHY : undefined}
      style=${{ height: lane.h + 'px', '--level': a.level }}
      tabIndex="0" onKeyDown=${(e) => treeKey(e, () => onSelect({ kind: 'agent', id: a.id }))}
      onClick=${() => onSelect({ kind: 'agent', id: a.id })} title=${isContext ? `${who}: ${CONTEXT_WHY}` : who}>
      ${a.level > 0 && html`<span class="branch" aria-hidden="true"></span>`}
      <div class="a1">
        <span class=${'atype' + (a.id === MAIN ? ' main' : '')} title=${agentLabel(a)}>${agentLabel(a)}</span>
        ${a.id && html`<span class="aid" title=${a.id}>${shortID(a.id, 7)}</span>`}
        <span class="spacer"></span>
        ${a.stopError && html`<span class="pill pill-failed" data-testid="agent-stop-error" title=${'stopped by a failed model request (API error: ' + a.stopError + ')'}>failed</span>`}
        ${failed > 0 && html`<span class="badge bad" title="failed calls">${failed}</span>`}
        ${a.background && html`<span class="badge bg" title=${(bgDone ? 'ran' : 'runs') + ' on in the background after its call returned' + (a.notificationStatus ? '; the client notified: ' + a.notificationStatus : '')}>${bgDone ? 'background' : 'bg running'}</span>`}
        ${a.denials > 0 && html`<span class="badge deny" title="denied calls">${a.denials}</span>`}
        ${(a.stacked > 0 || model.expanded.has(a.id)) && html`<button type="button" class="rows" data-testid="lane-rows"
          title=${a.stacked > 0 ? `${plural(a.stacked, 'call')} overlap others and are drawn under them: show every row` : 'show at most 4 rows'}
          onClick=${(e) => { e.stopPropagation(); onRows(a.id); }} onKeyDown=${(e) => e.stopPropagation()}>${a.stacked > 0 ? `+${a.stacked}` : 'fewer rows'}</button>`}
        ${sig && sig.signals.length > 0 && html`<span class="badge warnb" data-testid="agent-signals" title=${sig.signals.map((x) => x.kind + ': ' + x.detail).join('\n')}>⚠ ${sig.signals.length}</span>`}
      </div>
      <div class="a2" title=${`${isContext ? 'context · ' : ''}${plural(a.toolCount ?? a.calls.length, 'call')} · ${fmtDur(dur)}${spawn ? ` · via ${desc || spawn.tool} (spawned by ${spawn.id})` : ''}`}>
        ${isContext && html`<span class="ctx">context · </span>`}${plural(a.toolCount ?? a.calls.length, 'call')} · ${fmtDur(dur)}${spawn ? html` · <span>via ${truncate(desc || spawn.tool, 28)}</span>` : ''}
      </div>
    </div>`;
}

function Tip({ hover, model }) {
  let body;
  if (hover.kind === 'overflow') {
    body = html`<b>${plural(hover.overflow.n, 'more call')}</b><div class="muted">overlapping others here, drawn under them: click to show every row</div>`;
  } else if (hover.kind === 'call') {
    const c = hover.call;
    body = html`<b>${c.tool}</b> <span class=${'pill pill-' + (model.noOutcome(c) ? 'nooutcome' : c.status)} data-testid="tip-status">${callStatusLabel(c, model)}</span>
      <div>${fmtDur(durationOf(c))} · ${fmtClock(c.start, true)}</div>
      <div class="muted">${c.subtype || c.family}${c.effect ? ' · ' + c.effect : ''}${c.agent ? ' · ' + shortID(c.agent, 7) : ' · main'}</div>
      ${c.entity && html`<div class="muted">${truncate(c.entity, 120)}</div>`}`;
  } else {
    const mk = hover.marker;
    body = html`<b>${MARKER_GLYPH[mk.kind] || mk.kind}</b> <span class="muted">${mk.event}</span>
      <div>${fmtClock(mk.t, true)}</div>${mk.label && html`<div class="muted">${truncate(mk.label, 120)}</div>`}`;
  }
  const left = hover.x + 14;
  return html`<div class="tip" style=${{ left: left + 'px', top: hover.y + 12 + 'px' }}>${body}</div>`;
}

// legendRows returns how many rows the legend el's keys take beside the
// toolbar's buttons, the hint (which comes before it) at its narrowest: its
// keys laid out as a wrapping flex row lays them out, a pixel short of the
// room so that a key that just fits by the sum does not wrap unforeseen.
function legendRows(el) {
  const tools = el.parentElement, hint = tools.querySelector('.hint');
  if (!hint) return 1;
  const ts = getComputedStyle(tools);
  // Between the hint and the legend: the spacer, a gap either side.
  const from = hint.getBoundingClientRect().left + parseFloat(getComputedStyle(hint).minWidth) + 2 * parseFloat(ts.columnGap);
  const room = tools.getBoundingClientRect().right - parseFloat(ts.paddingRight) - from - 1;
  const gap = parseFloat(getComputedStyle(el).columnGap);
  let rows = 1, x = 0;
  for (const key of el.children) {
    const w = key.getBoundingClientRect().width;
    if (x > 0 && x + gap + w > room) { rows++; x = w; } else x += (x > 0 ? gap : 0) + w;
  }
  return rows;
}

function Legend({ model, version }) {
  const fams = useMemo(() => [...new Set([...model.calls.values()].map((c) => c.subtype || c.family))].filter(Boolean).sort(), [version]);
  const noOutcome = model.over() && [...model.calls.values()].some((c) => c.status === 'pending');
  // Whether the legend takes a row of its own, under the buttons: when it
  // would take more than two beside them.
  const ref = useRef(null);
  const [own, setOwn] = useState(false);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const fit = () => setOwn(legendRows(el) > 2);
    fit();
    const ro = new ResizeObserver(fit);
    ro.observe(el.parentElement);
    return () => ro.disconnect();
  }, [fams.join('|'), noOutcome]);
  return html`<span class=${'legend' + (own ? ' own' : '')} ref=${ref}>
    ${fams.map((f) => html`<span class="lg"><i style=${{ background: familyColor(f) }}></i>${f}</span>`)}
    <span class="lg"><i class="lg-destructive"></i>destructive</span>
    <span class="lg"><i class="lg-err"></i>failed</span>
    ${noOutcome && html`<span class="lg"><i class="lg-nooutcome"></i>no outcome reported</span>`}
    <span class="lg"><i class="lg-deny">✕</i>denied</span>
    <span class="lg"><i class="lg-prompt"></i>prompt</span>
    <span class="lg"><i class="lg-compact"></i>compaction</span>
    <span class="lg"><i class="lg-bg"></i>background</span>
  </span>`;
}
