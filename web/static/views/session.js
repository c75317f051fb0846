// One session: header, filters, and the timeline, turns, events and
// numbers tabs, with the inspector beside them. Loaded from the API in
// pages and kept live from the event stream.
import { html, useState, useEffect, useLayoutEffect, useRef, useMemo, Select, revealBidi } from '../lib/html.js';
import { getJSON, pages, bodies, sessionPath, stream, withQuery, HTTPError, NO_ANSWER } from '../lib/api.js';
import { SessionModel, MAIN, FAILED, emptyFilters, eventMatches, eventSummary, eventName, contextPoints } from '../lib/model.js';
import { VList } from '../lib/vlist.js';
import { ms, fmtDur, fmtDate, fmtClock, fmtNum, fmtPct, plural, projectOf, shortID, truncate, shapeLabel, EFFECT_COLORS } from '../lib/format.js';
import { comparePath, openedFrom } from './compare.js';
import { Timeline, agentLabel } from './timeline.js';
import { Inspector } from './inspector.js';
import { showStreamState, CONNECT_WAIT } from '../lib/live.js';
import { statusOf, lineageOf, lineageVerb, lineageTitle, countOf, eventsOf, FROM_FILES, childrenOf, knownSession, StatusPill, Modelling, backToList, editable } from './sessions.js';

/** SIGNAL_PARAMS are the thresholds of GET …/signals a link can set. */
const SIGNAL_PARAMS = ['failed_repeats', 'read_repeats', 'thrash_switches', 'outlier_factor', 'outlier_siblings', 'outlier_calls', 'outlier_duration', 'stalled_after'];

const TABS = [['timeline', 'Timeline'], ['turns', 'Turns'], ['events', 'Events'], ['numbers', 'Numbers']];

function filtersFrom(params) {
  const f = emptyFilters();
  if (params.has('agent')) f.agent = params.get('agent') === 'main' ? MAIN : params.get('agent');
  f.tool = params.get('tool') || '';
  f.event = params.get('event') || '';
  f.status = params.get('status') || '';
  f.subtype = params.get('subtype') || '';
  f.effect = params.get('effect') || '';
  f.raw = params.get('raw') === '1';
  return f;
}

/**
 * useSession loads a session's model and events and keeps them live from
 * the session's stream: its model messages update the agents, calls and
 * header, its events the event list and the markers.
 */
function useSession(id, thresholds) {
  const model = useRef(null);
  if (!model.current || model.current.id !== id) model.current = new SessionModel(id);
  const [state, setState] = useState({ error: '', notFound: false, loading: true, eventsLoading: true, loaded: 0, live: 'connecting' });
  const [version, setVersion] = useState(0);
  const raf = useRef(0);

  // A layout effect: it runs right after the first render rather than
  // after the first paint, so the requests start a frame earlier.
  useLayoutEffect(() => {
    const m = model.current;
    let alive = true;
    const ctrl = new AbortController();
    const signal = ctrl.signal;
    // The signals of the session's agents (GET …/signals), read once the
    // model is loaded and again as it changes, at most every 2 s.
    let signalsAt = 0, signalsTimer = 0;
    const loadSignals = () => {
      signalsAt = Date.now();
      getJSON(withQuery(sessionPath(id, 'signals'), thresholds), { signal }).then((b) => {
        if (alive && m.setSignals(b)) setVersion(m.version);
      }, () => {});
    };
    const signalsSoon = () => {
      if (signalsTimer || !signalsAt) return;
      signalsTimer = setTimeout(() => { signalsTimer = 0; if (alive) loadSignals(); }, Math.max(0, signalsAt + 2000 - Date.now()));
    };
    const bump = () => {
      if (raf.current) return;
      raf.current = requestAnimationFrame(() => { raf.current = 0; if (alive) { m.settle(); setVersion(m.version); signalsSoon(); } });
    };
    // waiting: the collector has no such session (yet); the stream stays
    // open, and what it brings of the session has it read again.
    // unanswered: the collector did not answer the last read; it is read
    // again when the stream is live, which is when the collector answers,
    // even when the stream resumes where it was.
    let waiting = false, unanswered = false;
    const fail = (e, signal) => {
      if (!alive || signal.aborted) return;
      if (e instanceof HTTPError && e.status === 404) {
        waiting = true;
        setState((st) => ({ ...st, notFound: true, loading: false, eventsLoading: false }));
      } else {
        unanswered = e instanceof HTTPError && e.status === 0;
        setState((st) => ({ ...st, error: String(e.detail || e.message || e), loading: false, eventsLoading: false }));
      }
    };

    // The model as the collector has it now: the session view, its agents
    // and every page of its tool calls, each as of the event seq it reflects.
    const loadModel = async (signal) => {
      // All at once: the session view, the agents and the calls, each
      // listing page after page by its cursor.
      const sessionP = getJSON(sessionPath(id), { signal });
      const agentsP = (async () => {
        for await (const { items, body } of bodies(sessionPath(id, 'agents'), 'agents', { limit: 1000 }, { signal })) {
          if (!alive) return;
          m.upsertAgents(items, seqOr(body?.derived_seq));
          bump();
        }
      })();
      agentsP.catch(() => {});
      const session = await sessionP;
      m.setSession(session, seqOr(session?.derived_seq));
      let first = true;
      for await (const { items, body } of bodies(sessionPath(id, 'tool-calls'), 'tool_calls', { limit: 1000 }, { signal })) {
        if (!alive) return;
        m.upsertCalls(items, seqOr(body?.derived_seq));
        if (first) performance.mark('hw:first-calls');
        first = false;
        bump();
      }
      await agentsP;
    };

    // load reads the model, then the events. Read again (the session
    // appeared, the stream started afresh), it drops the read under way:
    // what both bring is kept once (events by seq, rows as of their seq).
    let loadCtrl = null;
    const load = async () => {
      if (loadCtrl) loadCtrl.abort();
      const lc = (loadCtrl = new AbortController());
      const signal = lc.signal;
      waiting = false;
      unanswered = false;
      try {
        await loadModel(signal);
      } catch (e) {
        fail(e, signal);
        return;
      }
      if (!alive || signal.aborted) return;
      performance.mark('hw:model');
      setState((st) => ({ ...st, notFound: false, error: '', loading: false, eventsLoading: true }));
      loadSignals();
      bump();
      // The events come after the model: the model alone draws the
      // timeline; the events add its markers, the event list and the curve.
      let loaded = 0, shown = 0;
      try {
        for await (const page of pages(sessionPath(id, 'events'), 'events', { limit: 1000 }, { signal })) {
          if (!alive || signal.aborted) return;
          for (const ev of page) m.addEvent(ev);
          loaded += page.length;
          // Draw at most a few times a second: re-rendering after every
          // page of a large session would cost more than loading it.
          const now = performance.now();
          if (now - shown > 400) {
            shown = now;
            setState((st) => ({ ...st, loaded }));
            bump();
          }
        }
      } catch (e) {
        fail(e, signal);
      }
      if (!alive || signal.aborted) return;
      performance.mark('hw:events');
      setState((st) => ({ ...st, loaded, eventsLoading: false }));
      bump();
    };

    const onEvent = (ev) => {
      if (waiting) load();
      // A large event comes without its payload, with where to read it whole.
      const ref = ev && typeof ev === 'object' ? ev.payload_omitted : null;
      if (ref && typeof ref.url === 'string' && ref.url.startsWith('/v1/sessions/')) {
        getJSON(ref.url, { signal }).then((body) => {
          const whole = Array.isArray(body?.events) ? body.events.find((e) => e && e.seq === ev.seq) : null;
          onEvent(whole || { ...ev, payload_omitted: undefined });
        }, () => onEvent({ ...ev, payload_omitted: undefined }));
        return;
      }
      const added = m.addEvent(ev);
      // A copy names the hook's events it copies, with what marks them now.
      if (m.applyCopyOf(ev) || added) bump();
    };
    const onModel = (msg) => {
      if (waiting) load();
      if (m.applyModel(msg)) {
        performance.mark('hw:live-model');
        bump();
      }
    };

    // The session's stream first: it starts at what is stored when it
    // connects (events and model changes), and the snapshot read after that
    // misses nothing. Events are kept once by seq, and a listing older than
    // a change the stream brought cannot undo it (upserts are as of a seq),
    // so the overlap is harmless. A stream that cannot connect does not
    // hold the page for long; when it connects later, or again without a
    // position to resume from, it starts at what is stored then, and the
    // snapshot is read again.
    let connected;
    const live = new Promise((resolve) => { connected = resolve; });
    let attempts = 0, started = false;
    // A stall depends on the collector's clock, not on an event: the
    // stream's notice of one asks for the signals again.
    const onSignals = () => {
      window.__hw = window.__hw || {};
      window.__hw.signalNotices = (window.__hw.signalNotices || 0) + 1;
      if (signalsAt) loadSignals();
    };
    const close = stream({
      path: withQuery('/v1/stream', { session_id: id }),
      onEvent, onModel, onSignals,
      onState: (s, { resumed } = {}) => {
        if (s === 'connecting') attempts++;
        if (s === 'live') {
          connected();
          if (started && ((attempts > 1 && !resumed) || unanswered) && alive) load();
        }
        if (alive) setState((st) => (st.live === s ? st : { ...st, live: s }));
      },
    });

    (async () => {
      await Promise.race([live, new Promise((resolve) => setTimeout(resolve, CONNECT_WAIT))]);
      if (!alive) return;
      started = true;
      load();
    })();
    return () => {
      alive = false;
      ctrl.abort();
      if (loadCtrl) loadCtrl.abort();
      close();
      cancelAnimationFrame(raf.current);
      clearTimeout(signalsTimer);
    };
  }, [id, JSON.stringify(thresholds)]);
  return { model: model.current, version, ...state };
}

/**
 * Signals lists the signs that an agent of the session is going wrong,
 * each with the calls that raised it. The list opens shown and folds
 * away: a session with hundreds of signals has thousands of links in it,
 * which the keyboard would otherwise have to cross to reach the views.
 */
function Signals({ model, onSelect }) {
  const [open, setOpen] = useState(true);
  const rows = [];
  for (const [agentId, a] of model.signals) {
    for (const sg of a.signals) rows.push({ agentId, ...sg });
  }
  if (!rows.length) return null;
  return html`<details class="signals" data-testid="signals" aria-label="Signals" open=${open} onToggle=${(e) => setOpen(e.currentTarget.open)}>
    <summary><b class="badge warnb">${plural(rows.length, 'signal')}</b></summary>
    ${rows.map((r, i) => {
      const ag = model.agents.get(r.agentId);
      return html`<div class="signal" key=${i}>
        <span class="skind">${r.kind.replace('_', ' ')}</span>${' '}<button type="button" class="link" onClick=${() => onSelect({ kind: 'agent', id: r.agentId })}>${ag ? agentLabel(ag) : 'agent'}${r.agentId ? ' ' + shortID(r.agentId, 7) : ''}</button>:${' '}<span>${r.detail}</span>
        ${r.calls.slice(0, 6).map((c) => html` <button type="button" class="link mono" key=${c} onClick=${() => onSelect({ kind: 'call', id: c })}>${shortID(c, 12)}</button>`)}
      </div>`;
    })}
  </details>`;
}

/**
 * Archives lists the transcripts archived when the session's agents
 * compacted (GET …/archives): which agent, when, how large, whether the
 * copy was cut at its cap and whether the summary is beside it. The files
 * live in the collector's home, on the agent's machine.
 */
function Archives({ id }) {
  const [list, setList] = useState([]);
  useEffect(() => {
    const ctl = new AbortController();
    getJSON(sessionPath(id, 'archives'), { signal: ctl.signal })
      .then((b) => setList(Array.isArray(b && b.archives) ? b.archives : []))
      .catch(() => {});
    return () => ctl.abort();
  }, [id]);
  if (!list.length) return null;
  return html`<section class="archives" data-testid="archives" aria-label="Compaction archives">
    <b class="badge">${plural(list.length, 'compaction archive')}</b>
    ${list.map((a) => html`<div class="archive" key=${a.path}>
      <span>${a.agent === 'main' ? 'main agent' : 'subagent ' + shortID(a.agent, 7)}</span>${' '}
      <span class="muted">${fmtDate(ms(a.time))} · ${fmtNum(a.bytes)} bytes${a.cut ? ' (cut at the cap)' : ''}${a.summary_path ? ' · summary kept' : ''}</span>${' '}
      <span class="mono muted" title=${a.path}>${truncate(a.path, 80)}</span>
    </div>`)}
  </section>`;
}

/**
 * ResumeFact shows what the latest resume or fork of the session began
 * with (clients from 2.1.332): its context, and what writing it to the
 * prompt cache again cost when the cache had likely expired.
 */
function ResumeFact({ s }) {
  const r = s.resume;
  if (!r || typeof r !== 'object') return null;
  const verb = resumeVerb(s);
  const tokens = typeof r.context_tokens === 'number' ? r.context_tokens : NaN;
  const usd = typeof r.estimated_cache_write_usd === 'number' ? r.estimated_cache_write_usd : NaN;
  const idle = typeof r.seconds_since_last_response === 'number' ? r.seconds_since_last_response * 1000 : NaN;
  const ctx = Number.isFinite(tokens) ? html`<b>${fmtNum(tokens)}</b> tokens` : 'its context';
  const title = Number.isFinite(idle) ? `idle ${fmtDur(idle)} before the ${verb === 'forked' ? 'fork' : 'resume'}` : '';
  if (r.prompt_cache_likely_expired === true) {
    return html`<span class="warn" data-testid="resume-cost" title=${title}>${verb} ${ctx} with an expired cache${Number.isFinite(usd) ? html`: ~<b>$${usd >= 1 ? usd.toFixed(2) : String(Number(usd.toPrecision(2)))}</b> to write it again` : ''}</span>`;
  }
  return html`<span data-testid="resume-cost" title=${title}>${verb} ${ctx}, cache warm</span>`;
}

/**
 * resumeVerb says how the run that reported the session's resume figures
 * began: the source of the collector's run that carries them (forked,
 * resumed, continued), else of its latest run.
 */
function resumeVerb(s) {
  const runs = Array.isArray(s.runs) ? s.runs.filter((x) => x && typeof x === 'object') : [];
  const at = s.resume && typeof s.resume.at === 'string' ? s.resume.at : '';
  const run = runs.find((x) => x.resume && x.resume.at === at) || runs[runs.length - 1];
  const source = run && typeof run.source === 'string' ? run.source : typeof s.source === 'string' ? s.source : '';
  return { fork: 'forked', continue: 'continued' }[source] || 'resumed';
}

/**
 * Children links the sessions that began from this one (the collector's
 * child_session_ids: forks, sessions a /clear or a compaction started),
 * each group named by how its sessions began, which their own views say:
 * read from the session list when it has them, else asked for (the first
 * MAX_CHILD_VIEWS).
 */
const MAX_CHILD_VIEWS = 20;
function Children({ s }) {
  const ids = Array.isArray(s.child_session_ids) ? s.child_session_ids.filter((x) => typeof x === 'string' && x) : [];
  const [views, setViews] = useState(() => new Map());
  const key = ids.join(',');
  useEffect(() => {
    const ctl = new AbortController();
    const want = ids.filter((id) => !knownSession(id) && !views.has(id)).slice(0, MAX_CHILD_VIEWS);
    Promise.all(want.map((id) => getJSON(sessionPath(id), { signal: ctl.signal }).then((v) => [id, v], () => null))).then((got) => {
      const ok = got.filter(Boolean);
      if (ok.length && !ctl.signal.aborted) setViews((old) => new Map([...old, ...ok]));
    });
    return () => ctl.abort();
  }, [key]);
  if (!ids.length) return null;
  const groups = childrenOf(s, (id) => knownSession(id) || views.get(id));
  return groups.map((g) => html`<span class=${'tag tag-child tag-' + g.kind} data-testid="session-children" key=${g.verb}>${g.verb}${g.ids.map((id, i) => html`${i ? ',' : ''} <a href=${'#/s/' + encodeURIComponent(id)} title=${id}>${shortID(id)}</a>`)}</span>`);
}

// seqOr reads a derived_seq, 0 when absent.
const seqOr = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * Count is a count of calls of the header, a button listing them when
 * there are any: the user who reads "3 failed" looks for those three.
 */
function Count({ v, cls, word, title, onShow }) {
  if (!v) return html`<span title=${title}><b>${fmtNum(v)}</b> ${word}</span>`;
  return html`<button type="button" class=${'link count ' + cls} data-testid=${'count-' + word} title=${title + ': list them'} onClick=${onShow}><b>${fmtNum(v)}</b> ${word}</button>`;
}

function Header({ model, version, id, onShow, eventsLoading }) {
  const s = model.session;
  const status = s ? statusOf(s) : '';
  const first = s ? ms(s.first_event_at) : model.t0;
  const last = s ? ms(s.ended_at || s.last_event_at) : model.t1;
  const failed = s ? countOf(s, 'failures') : undefined;
  const rejected = s ? countOf(s, 'rejected') : undefined;
  const denials = s ? countOf(s, 'denials') : undefined;
  const events = s ? eventsOf(s) : undefined;
  const lin = s ? lineageOf(s) : [];
  // The events the collector has yet to model (SessionModel.behind),
  // counted once they are loaded.
  const behind = model.behind();
  // Calls the session ended without an outcome of (still pending, as the
  // collector has them): the loaded calls, said apart from the failures.
  const noOutcome = model.over() ? [...model.calls.values()].filter((c) => c.status === 'pending').length : 0;
  const n = (v, one, many) => html`<b>${fmtNum(v)}</b> ${v === 1 ? one : many || one + 's'}`;
  return html`
    <div class="shdr">
      <div class="h1row">
        ${status && html`<${StatusPill} s=${s} testid="session-status" long=${true} />`}
        <h2 title=${s?.title || ''}>${s?.title ? truncate(s.title, 160) : html`<span class="muted">untitled session</span>`}</h2>
        <${Modelling} behind=${!!behind} detail=${!eventsLoading && behind?.events > 0 ? `(${plural(behind.events, 'event')} to go)` : ''} />
      </div>
      <div class="facts">
        <span title=${s?.cwd || ''}><b>${(s && projectOf(s)) || '–'}</b></span>
        <span>${s?.runtime || '–'}</span>
        ${s?.model && html`<span>${s.model}</span>`}
        <span title=${s?.first_event_at || ''}>started ${fmtDate(first)}</span>
        <span>${fmtDur(last - first)}</span>
        <span>${n(s && countOf(s, 'agents'), 'agent')}</span>
        ${s && shapeLabel(s.shape) && html`<span class="tag" data-testid="session-shape" title="how the session split its work among agents">${shapeLabel(s.shape)}</span>`}
        <span>${n(s && countOf(s, 'tool_calls'), 'tool call')}</span>
        <${Count} v=${failed} cls="bad" word="failed" title="calls that ended in an error or were interrupted" onShow=${() => onShow(FAILED)} />
        ${noOutcome > 0 && html`<span class="warn" data-testid="no-outcome" title="calls whose outcome no event reported before the session ended"><b>${fmtNum(noOutcome)}</b> without outcome</span>`}
        ${rejected > 0 && html`<${Count} v=${rejected} cls="bad" word="rejected" title="calls the client refused to run (a malformed call)" onShow=${() => onShow('rejected')} />`}
        <${Count} v=${denials} cls="deny" word="denied" title="calls a policy or the user denied" onShow=${() => onShow('denied')} />
        ${events === 0 ? html`<span data-testid="session-events" title=${FROM_FILES}>read from files</span>` : html`<span data-testid="session-events">${n(events, 'event')}</span>`}
        ${s && html`<${ResumeFact} s=${s} />`}
        ${lin.map((l) => html`<span class=${'tag tag-' + l.kind.split(' ')[0]} data-testid="session-lineage" title=${lineageTitle(l)}>${l.from ? lineageVerb(l) : l.unknownParent ? l.kind + ' (parent unknown)' : l.kind}${l.n > 1 ? ' ×' + l.n : ''}${l.from && html` <a href=${'#/s/' + encodeURIComponent(l.from)}>${shortID(l.from)}</a>`}</span>`)}
        ${s && html`<${Children} s=${s} />`}
        ${s && s.lineage === 'fork' && s.parent_session_id && html`<a data-testid="compare-parent" href=${comparePath(s.parent_session_id, id)} onClick=${() => openedFrom(comparePath(s.parent_session_id, id))}>compare with the baseline</a>`}
        <span class="muted mono" title="session id">${id}</span>
      </div>
    </div>`;
}

function Filters({ model, version, filters, setFilters }) {
  const order = model.layout().order;
  // A filter from the URL may name what has not loaded yet: keep it an
  // option, or the select would show another value than the one applied.
  const withCurrent = (list, v, by) => (v && !list.includes(v) ? [...list, v].sort(by) : list);
  // The values the collector gave the loaded calls of a field: no list of
  // them is kept here.
  const callValues = (field) => [...new Set([...model.calls.values()].map((c) => c[field]).filter(Boolean))];
  const tools = useMemo(() => withCurrent(model.toolNames(), filters.tool), [version, filters.tool]);
  const events = useMemo(() => withCurrent(model.eventNames(), filters.event), [version, filters.event]);
  const set = (k) => (v) => {
    setFilters({ ...filters, [k]: k === 'agent' ? (v === '*' ? null : v === 'main' ? MAIN : v) : v });
  };
  const agentValue = filters.agent == null ? '*' : filters.agent === MAIN ? 'main' : filters.agent;
  const subtypes = useMemo(() => withCurrent(callValues('subtype').sort(), filters.subtype), [version, filters.subtype]);
  // Failed (error or interrupted, the collector's verdict) is offered
  // first, before the statuses it joins: it is what the header counts.
  const statuses = useMemo(() => {
    const list = callValues('status').sort();
    if ([...model.calls.values()].some((c) => c.failed)) list.unshift(FAILED);
    return withCurrent(list, filters.status);
  }, [version, filters.status]);
  // The effects in the order of their colours (harmless to irreversible);
  // one the palette does not know comes last.
  const effects = useMemo(() => {
    const rank = (e) => { const i = Object.keys(EFFECT_COLORS).indexOf(e); return i < 0 ? Infinity : i; };
    const byRank = (a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
    return withCurrent(callValues('effect').sort(byRank), filters.effect, byRank);
  }, [version, filters.effect]);
  const any = filters.agent != null || filters.tool || filters.event || filters.status || filters.subtype || filters.effect || filters.raw;
  const agentOptions = [['*', 'all agents'], ...order.map((a) => [a.id === MAIN ? 'main' : a.id, '\u00a0'.repeat(a.level * 2) + agentLabel(a) + (a.id ? ' · ' + shortID(a.id, 7) : '')])];
  if (filters.agent != null && filters.agent !== MAIN && !model.agents.has(filters.agent)) agentOptions.push([filters.agent, shortID(filters.agent, 12)]);
  return html`
    <div class="filters" role="group" aria-label="Filters">
      <${Select} label="Agent" value=${agentValue} onChange=${set('agent')} options=${agentOptions} />
      <${Select} label="Tool" value=${filters.tool} onChange=${set('tool')} options=${[['', 'all tools'], ...tools.map((t) => [t, t])]} />
      <${Select} label="Event" value=${filters.event} onChange=${set('event')} options=${[['', 'all events'], ...events.map((t) => [t, t])]} />
      <${Select} label="Status" value=${filters.status} onChange=${set('status')}
        options=${[['', 'any status'], ...statuses.map((t) => [t, t])]} />
      <${Select} label="Subtype" value=${filters.subtype} onChange=${set('subtype')} options=${[['', 'all subtypes'], ...subtypes.map((t) => [t, t])]} />
      <${Select} label="Effect" value=${filters.effect} onChange=${set('effect')} options=${[['', 'any effect'], ...effects.map((t) => [t, t])]} />
      <label class="raw" title="Also list the records read from a transcript or rollout of what a hook delivered: every stored event">
        <input type="checkbox" data-testid="raw-events" checked=${filters.raw} onChange=${(e) => setFilters({ ...filters, raw: e.currentTarget.checked })} /> all raw events</label>
      ${any && html`<button type="button" onClick=${() => setFilters(emptyFilters())}>clear filters</button>`}
    </div>`;
}

// onRowKey opens a row with Enter or Space, and moves to the row above or
// below with the arrow keys.
function onRowKey(e, open) {
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    open();
  } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    const next = e.key === 'ArrowDown' ? e.currentTarget.nextElementSibling : e.currentTarget.previousElementSibling;
    if (next) {
      e.preventDefault();
      next.focus();
    }
  }
}

// FILES name the client's files the collector reads events from, by
// envelope kind.
const FILES = { transcript: 'transcript', rollout: 'rollout' };

/**
 * Origin marks where an event came from when not from a hook alone, as
 * the collector says: a copy of a hook's event read from a file (listed
 * with the raw events only), a record of a file no hook delivered, or a
 * hook's event a file recorded too.
 */
function Origin({ ev }) {
  const file = FILES[ev.kind];
  if (file && ev.copy === true) {
    return html`<span class="origin copy" data-origin="copy" title=${`A copy read from the ${file} of what a hook delivered: counted once, as the hook's event`}>copy</span>`;
  }
  if (file) return html`<span class="origin file" data-origin=${file} title=${`Read from the ${file}: no hook delivered it`}>${file}</span>`;
  const also = Array.isArray(ev.also_read_from) ? ev.also_read_from.filter((k) => FILES[k]) : [];
  if (also.length) {
    return html`<span class="origin also" data-origin="also" title=${`Also read from the ${also.join(' and ')}`}>+${also.join('+')}</span>`;
  }
  return null;
}

function EventRow({ ev, model, selected, onSelect }) {
  const st = model.eventStatus(ev);
  const a = model.agents.get(ev.agent_id || MAIN);
  const open = () => onSelect({ kind: 'event', seq: ev.seq });
  // The row cuts each cell to its column; its tooltip holds what was cut.
  const summary = eventSummary(ev).slice(0, 1000).replace(/\s+/g, ' ');
  return html`
    <div class=${'erow' + (selected ? ' sel' : '')} role="listitem" tabIndex="0" aria-current=${selected ? 'true' : undefined} data-seq=${ev.seq}
      onClick=${open} onKeyDown=${(e) => onRowKey(e, open)}>
      <span class="mono muted">${fmtClock(ms(ev.time), true)}</span>
      <span class="ag" title=${(a ? agentLabel(a) : 'agent') + (ev.agent_id ? ' ' + ev.agent_id : '')}>${a ? agentLabel(a) : 'agent'}${ev.agent_id ? html` <span class="muted">${shortID(ev.agent_id, 6)}</span>` : ''}</span>
      <span class="en" title=${eventName(ev) || ev.kind}>${eventName(ev) || ev.kind}${' '}<${Origin} ev=${ev} /></span>
      <span class="tn" title=${ev.tool_name || undefined}>${ev.tool_name || ''}</span>
      <span class="sm" title=${summary || undefined}>${truncate(summary, 220)}</span>
      <span>${st && st !== 'ok' && html`<span class=${'pill pill-' + (st === 'pending' && model.over() ? 'nooutcome' : st)}>${st === 'pending' && model.over() ? 'no outcome' : st}</span>`}</span>
    </div>`;
}

function EventsTab({ model, version, filters, selected, onSelect }) {
  const list = useMemo(() => model.events.filter((ev) => eventMatches(ev, filters, model)), [version, filters]);
  const selIdx = selected && selected.kind === 'event' ? list.findIndex((e) => e.seq === selected.seq) : -1;
  return html`
    <div class="events-tab">
      <div class="ehead"><span>time</span><span>agent</span><span>event</span><span>tool</span><span>summary</span><span>status</span></div>
      <${VList} class="elist" label="Events" items=${list} rowHeight=${28} scrollTo=${selIdx}
        row=${(ev) => html`<${EventRow} key=${ev.seq} ev=${ev} model=${model} selected=${selIdx >= 0 && list[selIdx] === ev} onSelect=${onSelect} />`} />
    </div>`;
}

function TurnsTab({ model, version, filters, selected, onSelect }) {
  const [open, setOpen] = useState(null);
  const turns = useMemo(() => model.turns(), [version]);
  const numbers = useMemo(() => model.turnNumbers(turns), [turns]);
  return html`
    <div class="turns" data-testid="turns">
      ${turns.map((t) => {
        const failures = t.calls.filter((c) => c.failed).length;
        const denials = t.calls.filter((c) => c.status === 'denied').length;
        const rejections = t.calls.filter((c) => c.status === 'rejected').length;
        const n = numbers.get(t.id);
        const isOpen = open === t.id;
        const evs = isOpen ? t.seqs.map((s) => model.bySeq.get(s)).filter((ev) => ev && eventMatches(ev, filters, model)) : [];
        return html`
          <div class=${'turn' + (isOpen ? ' open' : '')} key=${t.id} data-prompt=${t.id}>
            <button type="button" class="thead" aria-expanded=${isOpen} onClick=${() => setOpen(isOpen ? null : t.id)}>
              <span class="tn">${n ? '#' + n : '–'}</span>
              <span class="tp" title=${t.prompt ? t.prompt.slice(0, 1000).replace(/\s+/g, ' ') : undefined}>${t.prompt ? truncate(t.prompt.slice(0, 1000).replace(/\s+/g, ' '), 200)
                : html`<span class="muted">${t.notification ? 'a background task reported back' : t.compaction && !t.user ? 'a compaction' : t.id ? 'prompt ' + shortID(t.id, 10) : 'events without a prompt'}</span>`}</span>
              <span class="num">${fmtClock(t.start)}</span>
              <span class="num">${fmtDur(t.end - t.start)}</span>
              <span class="num">${plural(t.agents.size, 'agent')}</span>
              <span class="num">${plural(t.calls.length, 'call')}</span>
              <span class=${'num ' + (failures ? 'bad' : '')}>${failures} failed</span>
              <span class=${'num ' + (denials ? 'deny' : '')}>${denials} denied</span>
              <span class="num deny">${rejections > 0 ? `${rejections} rejected` : ''}</span>
            </button>
            ${isOpen && html`<div class="tbody" style=${{ height: Math.min(420, evs.length * 28 + 4) + 'px' }}>
              <${VList} items=${evs} rowHeight=${28} label="Turn events"
                row=${(ev) => html`<${EventRow} key=${ev.seq} ev=${ev} model=${model} selected=${selected && selected.kind === 'event' && selected.seq === ev.seq} onSelect=${onSelect} />`} />
            </div>`}
          </div>`;
      })}
    </div>`;
}

function StatTable({ title, rows, label }) {
  return html`
    <table class="stats" aria-label=${title}>
      <thead><tr><th>${title}</th><th class="num">calls</th><th class="num">failed</th><th class="num">failure rate</th><th class="num">rejected</th><th class="num">denied</th><th class="num">p50</th><th class="num">p95</th></tr></thead>
      <tbody>${rows.map((r) => html`<tr>
        <td>${label(r.key)}</td><td class="num">${fmtNum(r.count)}</td><td class=${'num ' + (r.failures ? 'bad' : '')}>${fmtNum(r.failures)}</td>
        <td class="num">${fmtPct(r.rate)}</td><td class=${'num ' + (r.rejected ? 'bad' : '')}>${fmtNum(r.rejected)}</td><td class=${'num ' + (r.denials ? 'deny' : '')}>${fmtNum(r.denials)}</td>
        <td class="num">${fmtDur(r.p50)}</td><td class="num">${fmtDur(r.p95)}</td></tr>`)}
      </tbody>
    </table>`;
}

function Curve({ model, version }) {
  const ref = useRef(null);
  const [err, setErr] = useState('');
  const pts = useMemo(() => contextPoints(model), [version]);
  const n = pts.length;
  useEffect(() => {
    if (!n || !ref.current) return;
    let plot = null, gone = false;
    // uPlot is loaded only when a session has statusLine snapshots and the
    // user opens this tab: the first render does not pay for it.
    import('./chart.js').then(({ contextChart }) => {
      if (gone || !ref.current) return;
      plot = contextChart(ref.current, pts);
      // Test hook: the plot, its axes' labels as last drawn.
      (window.__hw = window.__hw || {}).curve = plot;
    }).catch((e) => setErr(String(e.message || e)));
    return () => { gone = true; if (plot) plot.destroy(); };
  }, [version, n]);
  if (!n && model.session?.runtime === 'codex') return html`<p class="muted" data-testid="curve-none">Codex tells hooks nothing of its context window: the curve is drawn from Claude Code's status line.</p>`;
  if (!n) return html`<p class="muted" data-testid="curve-none">No statusLine snapshots and no resume in this session: configure hookwatch as the statusLine command (<code>hookwatch install --statusline</code>) to record the context window and cost.</p>`;
  return html`<div class="curve" ref=${ref} data-testid="curve" data-points=${n}></div>${err && html`<p class="error">${err}</p>`}`;
}

/** fmtUSD renders a cost in dollars; unknown (an unpriced model) as a dash. */
function fmtUSD(usd, unpriced) {
  if (!Number.isFinite(usd)) return '–';
  const s = '$' + (usd >= 1 ? usd.toFixed(2) : usd.toFixed(4));
  return unpriced ? s + '+' : s;
}

/**
 * UsageTable lists tokens and cost per row (agents, turns) from the
 * model's usage (attribution.Usage, imported from the transcripts).
 */
function UsageTable({ title, rows, testid }) {
  return html`
    <table class="stats" aria-label=${title} data-testid=${testid}>
      <thead><tr><th>${title}</th><th class="num">responses</th><th class="num">input</th><th class="num">output</th><th class="num">cache read</th><th class="num">cache write</th><th class="num">cost</th></tr></thead>
      <tbody>${rows.map(({ label, u }) => html`<tr>
        <td>${label}</td><td class="num">${fmtNum(u.responses)}</td><td class="num">${fmtNum(u.input_tokens)}</td><td class="num">${fmtNum(u.output_tokens)}</td>
        <td class="num">${fmtNum(u.cache_read_tokens)}</td><td class="num">${fmtNum(u.cache_creation_tokens)}</td>
        <td class="num" title=${u.unpriced ? `${u.unpriced} responses of models the price table lacks are not counted` : ''}>${fmtUSD(u.cost_usd, u.unpriced)}</td></tr>`)}
      </tbody>
    </table>`;
}

function UsageSection({ model, agentName, numbers }) {
  const sess = model.session || {};
  const agents = [...model.agents.values()].filter((a) => a.raw && a.raw.usage).map((a) => ({ label: agentName(a.id), u: a.raw.usage }));
  // numbers are the Turns tab's (turnNumbers): "turn 3" is the same turn there.
  const turns = (Array.isArray(sess.turns) ? sess.turns : []).map((t) => {
    const n = numbers.get(t.prompt_id);
    return { label: `${n ? 'turn ' + n : 'turn –'}${t.prompt_id ? ' · ' + shortID(t.prompt_id, 8) : ''}`, u: t };
  });
  if (!sess.usage && !agents.length && sess.runtime === 'codex') {
    return html`<p class="muted" data-testid="usage-none">No token usage yet: the collector reads it from the session's rollout as Codex writes it (<code>hookwatch serve --codex-rollouts</code>, on by default).</p>`;
  }
  if (!sess.usage && !agents.length) {
    return html`<p class="muted" data-testid="usage-none">No token usage from the session's transcripts yet: the collector reads them as Claude Code writes them (<code>hookwatch serve --watch-transcripts</code>, on by default), and <code>hookwatch import</code> reads those written before it ran.</p>`;
  }
  const total = sess.usage ? [{ label: 'session (all agents)', u: sess.usage }] : [];
  return html`
    <div class="two">
      <div><${UsageTable} title="agent" rows=${[...total, ...agents]} testid="usage-agents" /></div>
      <div><${UsageTable} title="turn" rows=${turns} testid="usage-turns" /></div>
    </div>`;
}

function NumbersTab({ model, version }) {
  const st = useMemo(() => model.numbers(), [version]);
  const numbers = useMemo(() => model.turnNumbers(), [version]);
  const agentName = (id) => {
    const a = model.agents.get(id);
    return a ? `${agentLabel(a)}${id ? ' · ' + shortID(id, 7) : ''}` : id;
  };
  return html`
    <div class="numbers">
      <section><h3>Context window and cost</h3><${Curve} model=${model} version=${version} /></section>
      <section><h3>Tokens and cost</h3><${UsageSection} model=${model} agentName=${agentName} numbers=${numbers} /></section>
      <section class="two">
        <div><h3>Per tool</h3><${StatTable} title="tool" rows=${st.tools} label=${(k) => k || '(unknown)'} /></div>
        <div><h3>Per agent</h3><${StatTable} title="agent" rows=${st.agents} label=${agentName} /></div>
      </section>
    </div>`;
}

// tabKey moves between the tabs as a tab list does: the arrow keys to the
// next and the previous (round), Home and End to the first and the last,
// each shown as the focus reaches it.
function tabKey(e, tab, setTab) {
  const i = TABS.findIndex(([k]) => k === tab), n = TABS.length;
  const j = { ArrowRight: (i + 1) % n, ArrowLeft: (i - 1 + n) % n, Home: 0, End: n - 1 }[e.key];
  if (j === undefined) return;
  e.preventDefault();
  setTab(TABS[j][0]);
  e.currentTarget.parentElement.querySelectorAll('[role=tab]')[j]?.focus();
}

// selectionFrom reads the selection of a deep link: a call
// (call=<tool_use_id>), an agent (inspect=<agent id>, main for the main
// agent) or an event (seq=<its seq>).
function selectionFrom(params) {
  const id = params.get('call');
  if (id) return { kind: 'call', id };
  const agent = params.get('inspect');
  if (agent) return { kind: 'agent', id: agent === 'main' ? MAIN : agent };
  const seq = params.get('seq');
  if (seq && /^[1-9]\d{0,15}$/.test(seq)) return { kind: 'event', seq: +seq };
  return null;
}

const sameSelection = (a, b) => (a === b) || (a && b && a.kind === b.kind && a.id === b.id && a.seq === b.seq);

/** SessionView shows session id; params are the fragment's query (tab, filters and the selected call, agent or event). */
export function SessionView({ id, params }) {
  // Thresholds of the signals, from the link (failed_repeats=2,
  // stalled_after=1m): the collector's defaults otherwise.
  const thresholds = Object.fromEntries(SIGNAL_PARAMS.map((k) => [k, params.get(k) || '']));
  const s = useSession(id, thresholds);
  // The thresholds stay in the address the view writes: an entry the view
  // pushes or replaces, and Back to it, shows the same signals.
  const thresholdsKey = new URLSearchParams(Object.entries(thresholds).filter(([, v]) => v)).toString();
  const [tab, setTab] = useState(TABS.some(([k]) => k === params.get('tab')) ? params.get('tab') : 'timeline');
  const [filters, setFilters] = useState(() => filtersFrom(params));
  const [selected, setSelected] = useState(() => selectionFrom(params));
  const [focusOn, setFocusOn] = useState(null);
  const linked = useRef(params.get('call') || '');
  const pushNext = useRef(false);
  // step selects what a link of the inspector names, as a step of the history.
  const step = (sel) => {
    if (sameSelection(sel, selected)) return;
    pushNext.current = true;
    setSelected(sel);
  };

  useEffect(() => {
    const p = new URLSearchParams();
    if (tab !== 'timeline') p.set('tab', tab);
    if (filters.agent != null) p.set('agent', filters.agent === MAIN ? 'main' : filters.agent);
    if (filters.tool) p.set('tool', filters.tool);
    if (filters.event) p.set('event', filters.event);
    if (filters.status) p.set('status', filters.status);
    if (filters.subtype) p.set('subtype', filters.subtype);
    if (filters.effect) p.set('effect', filters.effect);
    if (filters.raw) p.set('raw', '1');
    for (const [k, v] of new URLSearchParams(thresholdsKey)) p.set(k, v);
    if (selected && selected.kind === 'call') p.set('call', selected.id);
    if (selected && selected.kind === 'agent') p.set('inspect', selected.id === MAIN ? 'main' : selected.id);
    if (selected && selected.kind === 'event') p.set('seq', String(selected.seq));
    const h = '#/s/' + encodeURIComponent(id) + (p.toString() ? '?' + p : '');
    // Following a link of the inspector to another call or agent is a
    // step Back undoes; everything else (a click on the timeline, a tab, a
    // filter) only keeps the address up to date.
    const step = pushNext.current;
    pushNext.current = false;
    if (location.hash !== h) (step ? history.pushState : history.replaceState).call(history, null, '', h);
  }, [tab, filters, selected, id, thresholdsKey]);

  // The URL changed under the view (back, forward, an edited address):
  // follow it. The view's own updates use replaceState or pushState, which
  // the router does not see: params is a new object only after a
  // hashchange, even one back to the address the view was opened with.
  useEffect(() => {
    const t = params.get('tab');
    setTab(TABS.some(([k]) => k === t) ? t : 'timeline');
    const f = filtersFrom(params);
    setFilters((old) => (JSON.stringify(old) === JSON.stringify(f) ? old : f));
    const call = params.get('call') || '';
    const want = selectionFrom(params);
    setSelected((old) => (want ? (sameSelection(old, want) ? old : want) : null));
    if (call) linked.current = call;
  }, [params]);

  // A linked call is shown on the timeline as soon as the model has it.
  useEffect(() => {
    const call = linked.current;
    if (call && s.model.calls.has(call)) {
      linked.current = '';
      setFocusOn({ id: call });
    }
  }, [s.version, params]);

  // Escape closes the details; with none open, Escape (or Backspace)
  // goes back to the list, where it was. A key a field or a widget took
  // (a search, a select, a handler that prevented its default) is left
  // to it.
  const isSelected = useRef(false);
  isSelected.current = Boolean(selected);
  useEffect(() => {
    const onKey = (e) => {
      if (e.key !== 'Escape' && e.key !== 'Backspace') return;
      if (e.key === 'Escape' && isSelected.current) {
        setSelected(null);
        return;
      }
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || editable(e.target)) return;
      e.preventDefault();
      backToList(id);
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [id]);

  // What opened the inspector gets the focus back when it closes, rather
  // than the page's body (where it falls when the focus was inside the
  // inspector, or on a row a virtual list has since replaced).
  const opener = useRef(null);
  const wasSelected = useRef(null);
  useLayoutEffect(() => {
    const prev = wasSelected.current;
    wasSelected.current = selected;
    if (selected && !prev) {
      const el = document.activeElement;
      opener.current = el && el !== document.body && !el.closest('.inspector') ? el : null;
      // On a narrow screen the details open under the list (style.css),
      // in the room of its lower half: the row opened is brought back
      // into sight, as the timeline brings back its call's lane.
      if (opener.current?.matches('.erow')) opener.current.scrollIntoView({ block: 'nearest' });
    } else if (!selected && prev) {
      const el = opener.current;
      opener.current = null;
      const lost = !document.activeElement || document.activeElement === document.body;
      if (!lost) return;
      const back = el && el.isConnected ? el
        : document.querySelector(prev.kind === 'event' ? `.erow[data-seq="${prev.seq}"]`
          : prev.kind === 'agent' ? `[role=treeitem][data-agent="${CSS.escape(prev.id)}"]` : '.tl-canvas');
      if (back) back.focus({ preventScroll: true });
    }
  }, [selected]);

  // In the commit that mounts the page, as the shared stream is held: the
  // banner (StreamDown) reads a page that shows no stream's state once
  // that commit is done as one that follows none.
  const streamOwner = useRef({});
  useLayoutEffect(() => { showStreamState(s.live, streamOwner.current); }, [s.live]);
  useEffect(() => () => showStreamState(null, streamOwner.current), []);

  // Test and benchmark hooks, set while rendering so the timeline's next
  // frame sees them.
  window.__hw = window.__hw || {};
  window.__hw.model = s.model;
  window.__hw.modelLoading = s.loading;
  window.__hw.loading = s.loading || s.eventsLoading;
  useEffect(() => { document.body.dataset.loading = s.loading || s.eventsLoading ? '1' : '0'; });
  // The page is named after the session's title, first, so that a tab
  // among others of hookwatch says which session it shows; by its id
  // until the title is known (or when the session has none); one the
  // collector does not have is said to be none.
  const title = s.model.session?.title || '';
  useEffect(() => {
    document.title = s.notFound ? 'No such session · hookwatch'
      : title ? `${revealBidi(truncate(title, 60))} · hookwatch` : `hookwatch · ${id.slice(0, 8)}`;
  }, [title, id, s.notFound]);

  if (s.notFound) {
    return html`<section class="notfound" data-testid="not-found"><h2>No such session yet</h2><p class="muted mono">${id}</p>
      <p>The collector has no events of it yet. This page keeps listening and shows the session as soon as its first event arrives.</p>
      <p><a href="#/">Back to the sessions</a></p></section>`;
  }
  const m = s.model;
  const error = s.error && html`<p class="error" data-testid="session-error">Cannot load this session: ${s.error}${s.error === NO_ANSWER ? '. It is read again as soon as the collector answers.' : ''}</p>`;
  // Nothing of the session loaded: its error alone, not a header of dashes.
  if (s.error && !m.session) return html`<section class="session">${error}</section>`;
  const merge = (f) => { setFilters({ ...filters, ...f }); setTab('timeline'); };
  // An agent filter the loaded session has no agent for (a link's ?agent=).
  const noAgent = !s.loading && filters.agent != null && filters.agent !== MAIN && !m.agents.has(filters.agent);
  return html`
    <section class="session">
      <${Header} model=${m} version=${s.version} id=${id} eventsLoading=${s.eventsLoading} onShow=${(status) => { setFilters({ ...emptyFilters(), status }); setTab('events'); }} />
      ${error}
      <${Signals} model=${m} version=${s.version} onSelect=${step} />
      <${Archives} id=${id} />
      <div class="tabs" role="tablist" aria-label="Views of the session">
        ${TABS.map(([k, l]) => html`<button type="button" role="tab" aria-selected=${tab === k} tabIndex=${tab === k ? 0 : -1} class=${tab === k ? 'on' : ''}
          onClick=${() => setTab(k)} onKeyDown=${(e) => tabKey(e, tab, setTab)}>${l}</button>`)}
        <span class="spacer"></span>
        <${Filters} model=${m} version=${s.version} filters=${filters} setFilters=${setFilters} />
        ${s.loading ? html`<span class="loading">loading…</span>` : s.eventsLoading && html`<span class="loading">loading… ${plural(s.loaded, 'event')}</span>`}
      </div>
      ${noAgent && html`<p class="muted" data-testid="no-such-agent">This session has no agent ${filters.agent}.</p>`}
      <div class=${'sbodyx' + (selected ? ' with-insp' : '')}>
        <div class="pane">
          ${tab === 'timeline' && html`<${Timeline} model=${m} version=${s.version} filters=${filters} selected=${selected} onSelect=${setSelected} focusOn=${focusOn} />`}
          ${tab === 'turns' && html`<${TurnsTab} model=${m} version=${s.version} filters=${filters} selected=${selected} onSelect=${setSelected} />`}
          ${tab === 'events' && html`<${EventsTab} model=${m} version=${s.version} filters=${filters} selected=${selected} onSelect=${setSelected} />`}
          ${tab === 'numbers' && html`<${NumbersTab} model=${m} version=${s.version} />`}
        </div>
        ${selected && html`<${Inspector} model=${m} version=${s.version} loading=${s.loading} eventsLoading=${s.eventsLoading} selected=${selected} onSelect=${step} onClose=${() => setSelected(null)} onFilter=${merge} onFocus=${(id) => { setTab('timeline'); setSelected({ kind: 'call', id }); setFocusOn({ id }); }} />`}
      </div>
    </section>`;
}
