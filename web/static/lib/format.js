// Formatting of times, durations and numbers, and the colours of tool
// families. Pure functions: no DOM.

/** ms parses an API timestamp to epoch milliseconds (NaN when absent). */
export function ms(t) {
  if (t == null || t === '') return NaN;
  if (typeof t === 'number') return t;
  return Date.parse(t);
}

/** fmtDur renders a duration in milliseconds compactly: 420 ms, 3.2 s, 1m 05s, 2h 03m. */
export function fmtDur(d) {
  if (!Number.isFinite(d) || d < 0) return '–';
  if (d < 1) return '<1 ms';
  if (d < 1000) return Math.round(d) + ' ms';
  if (d < 10000) return (d / 1000).toFixed(1) + ' s';
  if (d < 60000) return Math.round(d / 1000) + ' s';
  const s = Math.round(d / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  const m = Math.round(s / 60);
  if (m < 24 * 60) return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
  const h = Math.round(m / 60);
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

/** fmtClock renders a time of day, with milliseconds when precise is set. */
export function fmtClock(t, precise = false) {
  if (!Number.isFinite(t)) return '–';
  const d = new Date(t);
  const s = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return precise ? `${s}.${pad(d.getMilliseconds(), 3)}` : s;
}

/** fmtDate renders a date and time: today's times alone, other days with the date. */
export function fmtDate(t, now = Date.now()) {
  if (!Number.isFinite(t)) return '–';
  const d = new Date(t);
  const today = new Date(now);
  const sameDay = d.toDateString() === today.toDateString();
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (sameDay) return hm;
  if (d.getFullYear() === today.getFullYear()) {
    return `${d.toLocaleString('en', { month: 'short' })} ${d.getDate()} ${hm}`;
  }
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${hm}`;
}

/**
 * fmtISO renders a full timestamp for inspection: ISO 8601 to the
 * millisecond in local time, with its offset from UTC (Z in UTC), so that
 * it reads as the timeline's and the events' clocks do, which are local,
 * and still names one instant wherever it is read.
 */
export function fmtISO(t) {
  if (!Number.isFinite(t)) return '–';
  const d = new Date(t);
  const off = -d.getTimezoneOffset();
  const zone = off === 0 ? 'Z' : `${off < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${fmtClock(t, true)}${zone}`;
}

/** fmtAgo renders how long ago t was: now, 12s ago, 5m ago, 3h ago, 2d ago. */
export function fmtAgo(t, now = Date.now()) {
  if (!Number.isFinite(t)) return '–';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 5) return 'now';
  if (s < 60) return s + 's ago';
  if (s < 3600) return Math.floor(s / 60) + 'm ago';
  if (s < 86400) return Math.floor(s / 3600) + 'h ago';
  return Math.floor(s / 86400) + 'd ago';
}

/** fmtAge renders a long stretch of time in its largest unit: 45s, 12m, 3h, 49d. */
export function fmtAge(d) {
  if (!Number.isFinite(d) || d < 0) return '–';
  const s = Math.floor(d / 1000);
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm';
  if (s < 86400) return Math.floor(s / 3600) + 'h';
  return Math.floor(s / 86400) + 'd';
}

// One formatter for every count: toLocaleString builds a new one per call,
// which costs more than the rest of drawing a lane.
const numberFormat = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });

/** fmtNum renders a count with thousands separators; absent counts as a dash. */
export function fmtNum(n) {
  if (n == null || !Number.isFinite(+n)) return '–';
  return numberFormat.format(Math.round(+n));
}

/** plural renders a count with its noun: 1 call, 2 calls, 1,024 events. */
export function plural(n, one, many = one + 's') {
  return `${fmtNum(n)} ${n === 1 ? one : many}`;
}

/** fmtPct renders a ratio 0..1 as a percentage. */
export function fmtPct(r) {
  if (!Number.isFinite(r)) return '–';
  if (r === 0) return '0%';
  if (r < 0.001) return '<0.1%';
  return (r * 100).toFixed(r < 0.1 ? 1 : 0) + '%';
}

/** quantile returns the q-quantile (0..1) of sorted numbers, by nearest rank. */
export function quantile(sorted, q) {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

/** shortID abbreviates an id for display. */
export function shortID(id, n = 8) {
  if (!id) return '';
  const s = String(id);
  return s.length > n + 1 ? s.slice(0, n) + '…' : s;
}

/** truncate shortens text to n characters with an ellipsis. */
export function truncate(s, n) {
  s = s == null ? '' : String(s);
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

/**
 * shortPath shortens a path to n characters or fewer by cutting its
 * middle: the start says where it is, the end — whole names, up to two
 * thirds of it — which directory it is, the part truncate would cut.
 */
export function shortPath(p, n = 48) {
  p = p == null ? '' : String(p);
  if (p.length <= n) return p;
  let tail = p.slice(p.length - Math.ceil((n - 1) * 2 / 3));
  const sep = tail.search(/[/\\]/);
  if (sep > 0) tail = tail.slice(sep);
  return p.slice(0, n - 1 - tail.length) + '…' + tail;
}

/**
 * projectKey returns what sessions are grouped by: the collector's project
 * (the client's project directory, named by the cwd's slug), else the cwd.
 */
export function projectKey(s) {
  if (typeof s.project === 'string' && s.project) return s.project;
  return typeof s.cwd === 'string' ? s.cwd : '';
}

/** projectOf returns the project's name for people, as the collector names it (project_name). */
export function projectOf(s) {
  return (typeof s.project_name === 'string' && s.project_name) || (typeof s.project === 'string' && s.project) || '';
}

// Tool families and call subtypes, as the collector's classification
// names them (the timeline colours a call by its subtype, else its
// family). Colours follow Tableau 20, chosen to stay apart for the common
// colour-vision deficiencies; the legend is drawn from this table.
export const FAMILIES = {
  read_file: { color: '#4e79a7' },
  list_files: { color: '#a0cbe8' },
  search: { color: '#76b7b2' },
  modify_file: { color: '#f28e2b' },
  delete_file: { color: '#e15759' },
  run_command: { color: '#59a14f' },
  run_test: { color: '#8cd17d' },
  run_build: { color: '#b6992d' },
  run_lint: { color: '#f1ce63' },
  format_code: { color: '#ffbe7d' },
  install_dependency: { color: '#499894' },
  git_commit: { color: '#86bcb6' },
  git_push: { color: '#ff9d9a' },
  git_operation: { color: '#bab0ac' },
  web_fetch: { color: '#b07aa1' },
  web_search: { color: '#d4a6c8' },
  delegation: { color: '#9d7660' },
  mcp_call: { color: '#d37295' },
  task: { color: '#a0a0a0' },
  plan: { color: '#a0a0a0' },
  unknown: { color: '#000000' },
  other: { color: '#79706e' },
};

/** EFFECT_COLORS mark a call's effect, from harmless to irreversible. */
export const EFFECT_COLORS = {
  read_only: '#4e79a7',
  execute_check: '#59a14f',
  network: '#b07aa1',
  write: '#f28e2b',
  destructive: '#d62728',
};

const extraColors = ['#fabfd2', '#d7b5a6', '#8f8f8f', '#9c755f', '#e9c4a6', '#bcbd22', '#17becf', '#aec7e8'];

/** familyColor returns the colour of a family, stable for families this file does not know. */
export function familyColor(f) {
  if (FAMILIES[f]) return FAMILIES[f].color;
  let h = 0;
  for (const c of String(f)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return extraColors[h % extraColors.length];
}

/** STATUS_COLORS mark failures and denials on the timeline and in lists. */
export const STATUS_COLORS = {
  error: '#d62728',
  rejected: '#d62728',
  denied: '#7b1fa2',
  interrupted: '#ef6c00',
  pending: '#1f77b4',
};

/**
 * shapeLabel says a session's decomposition shape (attribution.Shape) in
 * the words the CLI uses; '' when the collector sent none.
 */
export function shapeLabel(shape) {
  if (!shape || typeof shape !== 'object') return '';
  switch (shape.kind) {
    case 'single': return 'single agent';
    case 'chain': return `chain of ${shape.depth}`;
    case 'fan_out': return `fan-out of ${shape.width}`;
    case 'orchestrator_workers': return `orchestrator-workers of depth ${shape.depth}`;
  }
  return typeof shape.kind === 'string' ? shape.kind : '';
}
