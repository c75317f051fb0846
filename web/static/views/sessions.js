// The session list: every session the collector knows, newest activity
// first, kept live from the event stream, searchable and filterable.
import { html, useState, useEffect, useLayoutEffect, useMemo, useRef, Select } from '../lib/html.js';
import { pages, NO_ANSWER } from '../lib/api.js';
import { subscribeModel, subscribeRestart, holdLive, liveReady, onLiveState } from '../lib/live.js';
import { VList } from '../lib/vlist.js';
import { modelBehind } from '../lib/model.js';
import { ms, fmtDur, fmtDate, fmtAgo, fmtAge, fmtNum, plural, projectOf, projectKey, shortID, shortPath, truncate } from '../lib/format.js';

/** statusOf returns the collector's status: running, background, ended or failed. */
export function statusOf(s) {
  return typeof s.status === 'string' && s.status ? s.status : 'running';
}

/**
 * statusLabel is how a status reads: "background" is a session whose main
 * agent stopped while subagents it launched in the background still run.
 */
export function statusLabel(status) {
  return status === 'background' ? 'background work running' : status;
}

/**
 * IDLE_AFTER is how long a session the collector still calls running (or
 * waiting on background work) may go without any event before it reads
 * "idle": an hour. A client that exits without its SessionEnd (killed, a
 * closed terminal) leaves its session running forever; a session at work
 * sends an event at least every few minutes (every tool call, prompt and
 * stop), and the collector's stall signal already fires after five
 * minutes on a call without an outcome. An hour of silence is a session
 * nobody works in, not a long call. The status stays the collector's:
 * the list's status filter still counts it under it (running, or
 * background work), saying how many of those are idle.
 */
export const IDLE_AFTER = 3600e3;

/**
 * idleFor returns how long a running session (or one waiting on background
 * work) has had no event, when that is IDLE_AFTER or more; else 0. It alone
 * decides what is idle: the pill and the status filter's counts.
 */
export function idleFor(s, now = Date.now()) {
  const st = statusOf(s);
  if (st !== 'running' && st !== 'background') return 0;
  const quiet = now - ms(s.last_event_at);
  return Number.isFinite(quiet) && quiet >= IDLE_AFTER ? quiet : 0;
}

/**
 * StatusPill shows a session's status as the collector has it, but a
 * running session idle for IDLE_AFTER or more as "idle 49d".
 */
export function StatusPill({ s, now = Date.now(), testid, long = false }) {
  const st = statusOf(s);
  const idle = idleFor(s, now);
  if (idle) {
    return html`<span class="pill pill-idle" data-testid=${testid} data-status=${st}
      title=${`${statusLabel(st)} as the collector has it (no end event), but no event for ${fmtDur(idle)}`}>idle ${fmtAge(idle)}</span>`;
  }
  return html`<span class=${'pill pill-' + st} data-testid=${testid} data-status=${st} title=${statusLabel(st)}>${long || st !== 'background' ? statusLabel(st) : 'background'}</span>`;
}

/** BEHIND_SAID is how long the model stays behind before a page says so. */
const BEHIND_SAID = 1000;

/**
 * Modelling says, discreetly, that the collector has yet to model some of
 * a session's events (modelBehind: the session page's SessionModel.behind,
 * a row's session view): the calls and agents shown are not all there yet.
 * It is said once the model has been behind for BEHIND_SAID, not for the
 * moment every live event takes, and goes as soon as a session view says
 * the model caught up. detail follows it ("(3 events to go)") when given.
 * live makes it a status the screen readers announce: the session page's
 * one note, not each row of a list that an import keeps behind.
 */
export function Modelling({ behind, detail = '', live = true }) {
  const [said, setSaid] = useState(false);
  useEffect(() => {
    if (!behind) {
      setSaid(false);
      return;
    }
    const t = setTimeout(() => setSaid(true), BEHIND_SAID);
    return () => clearTimeout(t);
  }, [behind]);
  if (!behind || !said) return null;
  return html`<span class="modelling muted" data-testid="modelling" role=${live ? 'status' : undefined}
    title="The collector stores events first and works out the calls and agents from them after: some are not shown yet. This goes once it has caught up.">modelling…${detail ? ' ' + detail : ''}</span>`;
}

/**
 * lineageOf lists how a session relates to earlier ones, as the collector
 * says: its lineage (fork, clear, compact, subagent) from its parent, the
 * session a throwaway id was folded into, a phantom, and how many times it
 * was resumed and compacted (else, before its model, its start source).
 */
export function lineageOf(s) {
  const out = [];
  const kinds = { fork: 'forked', clear: 'cleared', compact: 'compacted', subagent: 'subagent' };
  const str = (v) => (typeof v === 'string' ? v : '');
  if (str(s.parent_session_id)) out.push({ kind: kinds[s.lineage] || 'from', from: s.parent_session_id });
  // A lineage whose parent the collector has not seen (a fork of a
  // session that ran without hookwatch) is said all the same.
  else if (kinds[str(s.lineage)]) out.push({ kind: kinds[s.lineage], from: '', unknownParent: true });
  if (str(s.alias_of)) out.push({ kind: 'continued in', from: s.alias_of });
  if (s.phantom === true) out.push({ kind: 'phantom', from: '' });
  if (Array.isArray(s.runs)) {
    const resumes = s.runs.filter((r) => r && (r.source === 'resume' || r.source === 'continue')).length;
    if (resumes) out.push({ kind: 'resumed', from: '', n: resumes });
    const compactions = Array.isArray(s.compactions) ? s.compactions.length : 0;
    if (compactions) out.push({ kind: 'compacted', from: '', n: compactions });
  } else if (!out.length && str(s.source) && s.source !== 'startup') {
    out.push({ kind: { resume: 'resumed', continue: 'continued', ...kinds }[s.source] || s.source, from: '' });
  }
  return out;
}

const href = (id) => '#/s/' + encodeURIComponent(id);

// CHILD_VERBS say how a session relates to a child, by the child's lineage.
const CHILD_VERBS = { fork: 'forked into', clear: 'cleared into', compact: 'compacted into', subagent: 'subagent session' };

/**
 * childrenOf groups the sessions the collector lists as a session's
 * children (child_session_ids, in its order) by how they began, as their
 * own views say (view(id): a session view or undefined when not read):
 * [{ verb, kind, ids }], a child not read yet under "followed by".
 */
export function childrenOf(s, view = knownSession) {
  const ids = Array.isArray(s.child_session_ids) ? s.child_session_ids.filter((x) => typeof x === 'string' && x) : [];
  const groups = new Map();
  for (const id of ids) {
    const v = view(id);
    const lineage = v && typeof v.lineage === 'string' ? v.lineage : '';
    const verb = CHILD_VERBS[lineage] || 'followed by';
    let g = groups.get(verb);
    if (!g) groups.set(verb, (g = { verb, kind: lineage || 'child', ids: [] }));
    g.ids.push(id);
  }
  return [...groups.values()];
}

/** knownSession returns the session list's view of id, when the list has it. */
export function knownSession(id) {
  return store.byID.get(id);
}

/** lineageTitle is the tooltip of a lineage entry. */
export function lineageTitle(x) {
  if (x.from) return `${lineageVerb(x)} ${x.from}`;
  return x.unknownParent ? `${x.kind} from a session hookwatch has no record of` : x.kind;
}

/** lineageVerb says how a session relates to the one a lineage entry names. */
export function lineageVerb(l) {
  return l.kind === 'continued in' || l.kind === 'from' ? l.kind : l.kind + ' from';
}

/** countOf reads a session count, flat or under counts. */
export function countOf(s, k) {
  const c = s.counts && typeof s.counts === 'object' ? s.counts[k] : undefined;
  return typeof c === 'number' ? c : typeof s[k] === 'number' ? s[k] : undefined;
}

/**
 * eventsOf reads a session's event count: the store's, else the model's.
 * It counts what the hooks sent; the records read from the client's own
 * files (hookwatch import, the collector following transcripts and
 * rollouts) are no events.
 */
export function eventsOf(s) {
  return s.event_count ?? countOf(s, 'events');
}

/**
 * FROM_FILES says why a session shows no event beside its calls: every
 * session has events but one read from the client's files alone.
 */
export const FROM_FILES = "no hook sent an event of this session: what it shows was read from the client's files (its transcripts or rollouts)";

/**
 * SORTS are the orders the list's column headers offer, each by the
 * value of a session it compares (of) and said by label. Each starts
 * newest or most first, and goes the other way on a second press.
 */
const SORTS = {
  active: { label: 'last activity', of: (s) => s._last },
  started: { label: 'start', of: (s) => s._first },
  events: { label: 'events', of: eventsOf },
  calls: { label: 'tool calls', of: (s) => countOf(s, 'tool_calls') },
};

/**
 * parseSort reads the order the URL's sort names, <column> or
 * <column>.asc: { key, asc }; anything else is the default, the last
 * activity, newest first.
 */
export function parseSort(v) {
  const [key, dir] = String(v || '').split('.', 2);
  return Object.hasOwn(SORTS, key) ? { key, asc: dir === 'asc' } : { key: 'active', asc: false };
}

/** sortParam is the URL's sort for an order: '' for the default. */
function sortParam({ key, asc }) {
  return key === 'active' && !asc ? '' : key + (asc ? '.asc' : '');
}

/**
 * sortSessions returns sessions in the order sort names; those without
 * the value compared last, ties by last activity then id as the list's
 * own order. The default order is the list's already: sessions as given.
 */
function sortSessions(sessions, sort) {
  if (sort.key === 'active' && !sort.asc) return sessions;
  const of = SORTS[sort.key].of;
  const dir = sort.asc ? 1 : -1;
  const keyed = sessions.map((s) => {
    const v = of(s);
    return [Number.isFinite(v) ? v : null, s];
  });
  keyed.sort(([a, x], [b, y]) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : (a - b) * dir)
    || (y._last - x._last) || (x.id < y.id ? 1 : -1));
  return keyed.map(([, s]) => s);
}

// The list outlives the view: going back from a session shows it at once.
// Its stream is held only while the list shows (a session's page follows
// its own); opened again, it resumes where it stopped, and the model
// messages of what changed in between bring the list up to date.
const store = {
  byID: new Map(),
  list: [],
  // fresh holds the sessions put since the list was last merged (by id:
  // the latest of each); replaced says whether any was in it already.
  fresh: new Map(),
  replaced: false,
  loading: false,
  done: false,
  error: '',
  changeTimer: 0,
  listeners: new Set(),
  started: false,
  reading: false,
  again: false,
  // Where the list was left (VList's place), and the session last opened
  // from it: back from that session, the list is where it was, the focus
  // on that session's row. selected is the session the keyboard's
  // selection is on ('' for the first row shown).
  place: { key: '', offset: 0 },
  opened: '',
  selected: '',
};

/**
 * backToList goes from the session id shows back to the list: back in the
 * history when the list opened it (the list's filters, place and selection
 * are the entry before), else to the list's own page.
 */
export function backToList(id) {
  if (store.opened && store.opened === id) history.back();
  else location.hash = '#/';
}

/** openSession shows a session of the list, remembered for the way back. */
function openSession(id) {
  store.opened = id;
  store.selected = id;
  location.hash = href(id);
}

/**
 * editable tells a key typed into a field (a search, a select) from one
 * for the page: the list's and the session's keys leave the former alone.
 */
export function editable(el) {
  return Boolean(el && el.closest && el.closest('input, textarea, select, [contenteditable=""], [contenteditable=true]'));
}

// LIST_KEYS are the keys that move the list's selection, by how far: a
// number of rows, or the first or last row.
const LIST_KEYS = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1, PageDown: 'page', PageUp: '-page', Home: 'first', End: 'last' };

/** byRecent is the list's own order: latest activity first, ties by id, greatest first (the API's). */
const byRecent = (a, b) => (b._last - a._last) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * mergeSessions returns list, in byRecent order, with the sessions of fresh
 * in their places: each replaces the session of its id in list, if any
 * (replaced says whether any may be there). list is left as it was. Only
 * fresh is sorted: a page of 1,000 costs its own sort and one pass over
 * the list, not a sort of the 50,000 sessions a team server lists.
 */
export function mergeSessions(list, fresh, replaced = true) {
  if (!fresh.length) return list;
  fresh = [...fresh].sort(byRecent);
  if (replaced) {
    const ids = new Set(fresh.map((s) => s.id));
    list = list.filter((s) => !ids.has(s.id));
  }
  const out = new Array(list.length + fresh.length);
  let i = 0, j = 0, k = 0;
  while (i < list.length && j < fresh.length) out[k++] = byRecent(fresh[j], list[i]) < 0 ? fresh[j++] : list[i++];
  while (i < list.length) out[k++] = list[i++];
  while (j < fresh.length) out[k++] = fresh[j++];
  return out;
}

// changed merges the sessions put since the last change into the list and
// tells the views, at once: flush for the first rows and the end of a
// read, otherwise through schedule, once an animation frame however many
// pages and model messages came in it.
function changed() {
  if (store.changeTimer) {
    cancelAnimationFrame(store.changeTimer);
    store.changeTimer = 0;
  }
  if (store.fresh.size) {
    store.list = mergeSessions(store.list, [...store.fresh.values()], store.replaced);
    store.fresh.clear();
    store.replaced = false;
  }
  store.listeners.forEach((fn) => fn());
}

function schedule() {
  if (!store.changeTimer) store.changeTimer = requestAnimationFrame(() => { store.changeTimer = 0; changed(); });
}

function put(s) {
  if (!s || typeof s.id !== 'string') return;
  s._last = ms(s.last_event_at);
  s._first = ms(s.first_event_at);
  s._project = projectOf(s);
  s._projectKey = projectKey(s);
  s._status = statusOf(s);
  s._behind = modelBehind(s);
  s._search = [s.id, s.title, s._project, s.cwd, s.model, s.user, s.host, s.runtime].filter((x) => typeof x === 'string').join('\n').toLowerCase();
  if (store.byID.has(s.id)) store.replaced = true;
  store.byID.set(s.id, s);
  store.fresh.set(s.id, s);
}

// A model message carries the session's view as the collector has it now:
// the row is updated from it, without a request.
function onModel(msg) {
  if (!msg || typeof msg !== 'object' || !msg.session || typeof msg.session.id !== 'string') return;
  if (msg.session.probe) return; // hookwatch's own check (doctor's round trip): stored, not listed
  put(msg.session);
  schedule();
}

async function load() {
  if (store.started) return;
  store.started = true;
  store.loading = true;
  store.error = '';
  subscribeModel(onModel);
  subscribeRestart(reload);
  onLiveState(retryFailed);
  // The stream first: it starts at what is stored when it connects, and
  // the list read after that misses nothing.
  await liveReady();
  store.reading = true;
  try {
    let first = true;
    for await (const page of pages('/v1/sessions', 'sessions', { limit: 1000 })) {
      page.forEach(put);
      if (first) {
        first = false;
        changed();
        mark('first');
      } else schedule();
    }
  } catch (e) {
    // Tried again on the next mount (after a token is given, say).
    store.error = String(e.detail || e.message || e);
    store.started = false;
  }
  store.loading = false;
  store.reading = false;
  store.done = true;
  changed();
  mark('loaded');
  if (store.again) {
    store.again = false;
    reload();
  }
}

// retryFailed reads the list again when the stream is live after a read
// that failed: a stream that resumed where it was (Last-Event-ID) brings
// what changed, not what the failed read missed.
function retryFailed(s) {
  if (s === 'live' && store.error) reload();
}

// reload reads the list again when the stream connected afresh, without
// the position it had (or after the first read failed): what changed in
// between came on no stream.
function reload() {
  if (store.loading) {
    // A read that has begun may have missed it: read once more after it.
    // One that waits for the stream reads after it anyway.
    if (store.reading) store.again = true;
    return;
  }
  store.started = false;
  load();
}

// mark records list milestones for the benchmark: when the first page and
// the whole list were rendered.
function mark(name) {
  requestAnimationFrame(() => {
    const hw = (window.__hw = window.__hw || {});
    hw.list = hw.list || {};
    hw.list[name] = performance.now();
    performance.mark('hw:list-' + name);
  });
}

function useSessions() {
  const [, setTick] = useState(0);
  useEffect(() => {
    const fn = () => setTick((t) => t + 1);
    store.listeners.add(fn);
    load();
    return () => store.listeners.delete(fn);
  }, []);
  // Held from before the first paint: back from a session, whose stream
  // the page showed, the state shown goes straight to the list's stream
  // connecting, not through "offline" while none is open.
  useLayoutEffect(() => holdLive(), []);
  return store;
}

// sessionKey names a session of the list for VList.
const sessionKey = (s) => s.id;

const RANGES = [['', 'any time'], ['1h', 'last hour'], ['24h', 'last 24 h'], ['7d', 'last 7 days'], ['30d', 'last 30 days']];
const RANGE_MS = { '1h': 3600e3, '24h': 86400e3, '7d': 7 * 86400e3, '30d': 30 * 86400e3 };

function Lineage({ s }) {
  const l = lineageOf(s);
  const children = childrenOf(s);
  if (!l.length && !children.length) return null;
  return html`<span class="lineage">${l.map((x) => html`
    <span class=${'tag tag-' + x.kind.split(' ')[0]} title=${lineageTitle(x)}>${x.from ? lineageVerb(x) : x.kind}${x.n > 1 ? ' ×' + x.n : ''}${x.from && html` <a tabIndex="-1" href=${href(x.from)}>${shortID(x.from)}</a>`}</span>`)}${children.map((g) => html`
    <span class=${'tag tag-child tag-' + g.kind} data-testid="session-children" title=${g.verb + ' ' + g.ids.join(', ')}>→ ${g.verb} <a tabIndex="-1" href=${href(g.ids[0])}>${shortID(g.ids[0])}</a>${g.ids.length > 1 ? ` +${g.ids.length - 1}` : ''}</span>`)}</span>`;
}

/** rowID is the element id of the list's row at index i: its listbox's aria-activedescendant. */
const rowID = (i) => 'srow-' + i;

function Row({ s, i, now, selected }) {
  const end = s.ended_at ? ms(s.ended_at) : s._last;
  const dur = end - s._first;
  const count = (v, cls, title) => html`<span class=${'num ' + (v > 0 ? cls : v === 0 ? 'zero' : '')} title=${title || undefined}>${fmtNum(v)}</span>`;
  const rejected = countOf(s, 'rejected');
  return html`
    <div class=${'srow st-' + s._status} role="option" id=${rowID(i)} aria-selected=${selected ? 'true' : 'false'} data-session=${s.id} onClick=${(e) => {
      store.opened = s.id;
      store.selected = s.id;
      if (!e.target.closest('a') && !getSelection().toString()) location.hash = href(s.id);
    }}>
      <span><${StatusPill} s=${s} now=${now} /></span>
      <span class="title">
        <a class="t1" tabIndex="-1" href=${href(s.id)} title=${s.title || undefined}>${s.title ? truncate(s.title, 140) : html`<span class="muted">untitled</span>`}</a>
        <span class="t2">${shortID(s.id, 8)}${s.model ? ' · ' + s.model : ''}${s.user ? ' · ' + s.user : ''}<${Modelling} behind=${s._behind} live=${false} /></span>
      </span>
      <span class="proj" title=${s.cwd || ''}>${s._project || '–'}</span>
      <span class="rt">${s.runtime || '–'}</span>
      <span class="when" title=${`started ${s.first_event_at || '–'}, last event ${s.last_event_at || '–'}`}>${fmtDate(s._first, now)}<span class="t2">active ${fmtAgo(s._last, now)}</span></span>
      <span class="num">${fmtDur(dur)}</span>
      ${eventsOf(s) === 0 ? html`<span class="num zero" data-testid="row-events" title=${FROM_FILES}>–</span>` : html`<span class="num" data-testid="row-events">${fmtNum(eventsOf(s))}</span>`}
      <span class="num">${fmtNum(countOf(s, 'agents'))}</span>
      <span class="num">${fmtNum(countOf(s, 'tool_calls'))}</span>
      ${count(countOf(s, 'failures'), 'bad', rejected > 0 ? `and ${fmtNum(rejected)} rejected: calls the client refused to run` : '')}
      ${count(countOf(s, 'denials'), 'deny')}
      <span class="lin"><${Lineage} s=${s} /></span>
    </div>`;
}

/** describeFilters says what the list's filters ask for, in words. */
function describeFilters({ q, project, status, range }) {
  const parts = [];
  if (q.trim()) parts.push(`“${q.trim()}”`);
  if (project) parts.push(`in ${project}`);
  if (status) parts.push(statusLabel(status));
  const r = RANGES.find(([k]) => k === range);
  if (range && r) parts.push(`active in the ${r[1]}`);
  return parts.length ? parts.join(', ') : 'these filters';
}

/** SessionList is the list view; params are the fragment's query. */
export function SessionList({ params }) {
  const st = useSessions();
  const [q, setQ] = useState(params.get('q') || '');
  const [project, setProject] = useState(params.get('project') || '');
  const [status, setStatus] = useState(params.get('status') || '');
  const [range, setRange] = useState(params.get('range') || '');
  const [sortBy, setSortBy] = useState(params.get('sort') || '');
  const sort = parseSort(sortBy);
  const [now, setNow] = useState(Date.now());
  const searchRef = useRef(null);
  const [selected, setSelected] = useState(store.selected);
  // reveal is VList's: { index } of the row a key moved the selection to.
  const [reveal, setReveal] = useState(null);

  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 15000);
    return () => clearInterval(t);
  }, []);
  // Back from a session opened from the list, the focus goes to the list,
  // its selection on that session's row (VList scrolled it back into
  // place): a keyboard goes on from there. The list is drawn a frame or
  // two after the view.
  useEffect(() => {
    const id = store.opened;
    store.opened = '';
    if (!id) return;
    setSelected(id);
    let raf = 0, tries = 10;
    const focus = () => {
      const l = document.querySelector('.slist');
      if (l && l.querySelector(`[data-session="${CSS.escape(id)}"]`)) l.focus({ preventScroll: true });
      else if (--tries > 0) raf = requestAnimationFrame(focus);
    };
    raf = requestAnimationFrame(focus);
    return () => cancelAnimationFrame(raf);
  }, []);
  // A link followed within the page (#/?status=failed) names the whole
  // view: the filters are what it says, those it leaves out cleared. The
  // router hands a new params on each hashchange and popstate only, not
  // on the replaceState below, so this follows links, not the list's own
  // writes.
  const firstParams = useRef(params);
  useEffect(() => {
    if (firstParams.current === params) return;
    firstParams.current = params;
    setQ(params.get('q') || '');
    setProject(params.get('project') || '');
    setStatus(params.get('status') || '');
    setRange(params.get('range') || '');
    setSortBy(params.get('sort') || '');
  }, [params]);
  useEffect(() => {
    // Keep the filters in the URL so a view can be shared and survives reload.
    const p = new URLSearchParams();
    if (q) p.set('q', q);
    if (project) p.set('project', project);
    if (status) p.set('status', status);
    if (range) p.set('range', range);
    if (sortParam(sort)) p.set('sort', sortParam(sort));
    const h = '#/' + (p.toString() ? '?' + p : '');
    if (location.hash !== h && !(location.hash === '' && h === '#/')) history.replaceState(null, '', h);
  }, [q, project, status, range, sort.key, sort.asc]);

  // Projects by key, labelled for people: by name, and by directory (its
  // latest session's cwd, shortened) when two projects share the name —
  // the key, Claude Code's folder name (-home-dev-src-demo), is no
  // reading for people; it is left only to projects the directory cannot
  // tell apart.
  const projects = useMemo(() => {
    const byKey = new Map();
    for (const s of st.list) {
      if (s._projectKey && !byKey.has(s._projectKey)) byKey.set(s._projectKey, { name: s._project || s._projectKey, dir: typeof s.cwd === 'string' ? shortPath(s.cwd) : '' });
    }
    const count = (labels) => {
      const n = new Map();
      for (const l of labels) n.set(l, (n.get(l) || 0) + 1);
      return n;
    };
    const names = count([...byKey.values()].map((p) => p.name));
    const dirs = count([...byKey.values()].filter((p) => names.get(p.name) > 1).map((p) => p.dir));
    const label = (k, p) => (names.get(p.name) === 1 ? p.name : p.dir && dirs.get(p.dir) === 1 ? p.dir : k);
    return [...byKey.entries()].map(([k, p]) => [k, label(k, p)]).sort((a, b) => a[1].localeCompare(b[1]));
  }, [st.list]);
  const shown = useMemo(() => {
    const needle = q.trim().toLowerCase();
    // The cutoff moves with the list's clock (now), as the ages the rows
    // show do: a session leaves "last hour" when its hour is up, not when
    // the list next changes. Without a range, a tick filters nothing
    // again (range && now in the dependencies).
    const since = RANGE_MS[range] ? now - RANGE_MS[range] : -Infinity;
    return st.list.filter((s) => (!needle || s._search.includes(needle))
      && (!project || s._projectKey === project)
      && (!status || s._status === status)
      && (s._last >= since));
  }, [st.list, q, project, status, range, range && now]);
  const sorted = useMemo(() => sortSessions(shown, sort), [shown, sort.key, sort.asc]);
  // The row selected, by session, so that it stays on its session while
  // live changes and filters move it; the first row when that session is
  // not shown (none chosen yet, or filtered out).
  const selIndex = useMemo(() => {
    const i = selected ? sorted.findIndex((s) => s.id === selected) : -1;
    return i >= 0 ? i : 0;
  }, [sorted, selected]);
  // onListKey moves the selection (LIST_KEYS) and opens its session
  // (Enter); a key typed into a field is the field's, and a link of a row
  // that has the focus follows itself on Enter.
  const onListKey = (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || editable(e.target) || !sorted.length) return;
    if (e.key === 'Enter') {
      if (e.target.closest('a')) return;
      e.preventDefault();
      openSession(sorted[selIndex].id);
      return;
    }
    const by = LIST_KEYS[e.key];
    if (by === undefined) return;
    e.preventDefault();
    const page = Math.max(1, Math.floor((e.currentTarget.clientHeight || 440) / 44) - 1);
    const to = by === 'first' ? 0 : by === 'last' ? sorted.length - 1
      : selIndex + (by === 'page' ? page : by === '-page' ? -page : by);
    const i = Math.max(0, Math.min(sorted.length - 1, to));
    store.selected = sorted[i].id;
    setSelected(store.selected);
    setReveal({ index: i });
  };
  // A key for the list pressed while nothing has the focus (the page just
  // opened, or a click on the background) goes to the list.
  const listKey = useRef(onListKey);
  listKey.current = onListKey;
  useEffect(() => {
    const on = (e) => {
      if (e.target !== document.body || !(e.key in LIST_KEYS)) return;
      const l = document.querySelector('.slist');
      if (!l) return;
      l.focus({ preventScroll: true });
      listKey.current({ key: e.key, target: l, currentTarget: l, altKey: e.altKey, ctrlKey: e.ctrlKey, metaKey: e.metaKey, preventDefault: () => e.preventDefault() });
    };
    addEventListener('keydown', on);
    return () => removeEventListener('keydown', on);
  }, []);

  // sortButton is a column header that orders the list by SORTS[key]; a
  // call, not a component, so that a press keeps the focus on it.
  const sortButton = (key, text) => {
    const on = sort.key === key;
    const label = SORTS[key].label;
    return html`<button type="button" class=${'sort' + (on ? ' sorted' : '')} aria-sort=${on ? (sort.asc ? 'ascending' : 'descending') : 'none'}
      title=${on ? `Sorted by ${label}, ${sort.asc ? 'least' : 'most'} first: press for ${sort.asc ? 'most' : 'least'} first` : `Sort by ${label}, ${key === 'active' || key === 'started' ? 'newest' : 'most'} first`}
      onClick=${() => setSortBy(sortParam({ key, asc: on ? !sort.asc : false }))}>${text}${on && html`<span aria-hidden="true">${sort.asc ? ' ▲' : ' ▼'}</span>`}</button>`;
  };

  // Sessions by status, and of those the idle ones: idleFor decides, as
  // it does for the rows' pills, so the count is the pills the filter shows.
  const byStatus = useMemo(() => {
    const c = { running: 0, background: 0, ended: 0, failed: 0 };
    const idle = { running: 0, background: 0 };
    for (const s of st.list) {
      c[s._status] = (c[s._status] || 0) + 1;
      if (idleFor(s, now)) idle[s._status] = (idle[s._status] || 0) + 1;
    }
    return { c, idle };
  }, [st.list, now]);
  const statusOption = (v) => {
    const idle = byStatus.idle[v];
    return [v, `${statusLabel(v)} (${fmtNum(byStatus.c[v])}${idle ? `, ${fmtNum(idle)} idle` : ''})`];
  };

  return html`
    <section class="sessions">
      <div class="toolbar">
        <input ref=${searchRef} class="search" type="search" placeholder="Search title, id, project, model…" aria-label="Search sessions"
          value=${q} onInput=${(e) => setQ(e.currentTarget.value)} />
        <${Select} label="Project" value=${project} onChange=${setProject} options=${[['', 'all projects'], ...projects]} />
        <${Select} label="Status" value=${status} onChange=${setStatus} options=${[['', 'any status'], ...['running', 'background', 'ended', 'failed'].map(statusOption)]} />
        <${Select} label="Time range" value=${range} onChange=${setRange} options=${RANGES} />
        <span class="spacer"></span>
        <span class="count" data-testid="session-count">${shown.length !== st.list.length ? `${fmtNum(shown.length)} of ${plural(st.list.length, 'session')}` : plural(shown.length, 'session')}${st.done ? '' : ' · loading…'}</span>
      </div>
      ${st.error && html`<p class="error" data-testid="sessions-error">Cannot load sessions: ${st.error}${st.error === NO_ANSWER ? '. They are read again as soon as it answers.' : ''}</p>`}
      <div class="shead" role="presentation">
        <span>status</span><span>session</span><span>project</span><span>runtime</span><span class="when">${sortButton('started', 'started')}${sortButton('active', 'active')}</span>
        <span class="num">duration</span><span class="num">${sortButton('events', 'events')}</span>
        <span class="num">agents</span><span class="num">${sortButton('calls', 'calls')}</span><span class="num">failed</span><span class="num">denied</span>
        <span>lineage</span>
      </div>
      <div class="sbody">
        ${st.done && !st.error && !st.list.length
          ? html`<div class="empty" data-testid="no-sessions"><p>No sessions yet.</p>
              <p class="muted">Install the hooks (<code>hookwatch install</code> for Claude Code, <code>hookwatch install --codex</code> for Codex) and start the agent: its sessions appear here as they run.</p>
              <p class="muted">The sessions already on this machine: <code>hookwatch import</code> (<code>--codex</code> for Codex's). A session to look at now: <code>hookwatch demo</code>.</p></div>`
          : st.done && st.list.length && !shown.length
            ? html`<div class="empty" data-testid="no-match"><p>No session matches ${describeFilters({ q, project: projects.find(([k]) => k === project)?.[1] || project, status, range })}.</p>
                <p><button type="button" onClick=${() => { setQ(''); setProject(''); setStatus(''); setRange(''); searchRef.current?.focus(); }}>Clear the filters</button></p></div>`
            : html`<${VList} label="Sessions" items=${sorted} rowHeight=${44} class="slist" keyOf=${sessionKey} place=${store.place}
                role="listbox" reveal=${reveal} attrs=${{ tabIndex: 0, 'aria-activedescendant': rowID(selIndex), onKeyDown: onListKey }}
                row=${(s, i) => html`<${Row} key=${s.id} s=${s} i=${i} now=${now} selected=${i === selIndex} />`} />`}
      </div>
    </section>`;
}
