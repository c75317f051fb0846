// The session as the dashboard shows it: the collector's session model
// (the session view, its agents and tool calls) arranged for display, and
// the session's stored events for the event list, the markers on the
// timeline and the context curve.
//
// Nothing here derives the model: agents, tool calls, statuses, families,
// durations and counts are the collector's (GET /v1/sessions/{id},
// /agents, /tool-calls, and the model messages of the live stream). This
// file only indexes and lays them out; the one grouping of its own is
// turns(), the loaded events and calls by their prompt id for the Turns
// tab (a subagent's without one by the prompt of the call that spawned
// it), whose user prompts it numbers as the collector counts them
// (turnNumbers, checked against counts.prompts). Everything it reads is hostile: any
// field may be missing or of the wrong type, and nothing here may throw.

import { ms, quantile } from './format.js';

/** MAIN is the id of the main agent. */
export const MAIN = '';

const TOOL_EVENTS = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'PermissionDenied', 'PostToolBatch']);
export const isToolEvent = (name) => TOOL_EVENTS.has(name);

const obj = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});
const str = (v) => (typeof v === 'string' ? v : '');
const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);
const count = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** payloadOf returns the payload object of a stored event. */
export function payloadOf(ev) {
  return obj(obj(ev?.envelope).payload);
}

/** decisionOf returns the policy decision recorded with an event, or null. */
export function decisionOf(ev) {
  const d = obj(ev?.envelope).decision;
  return d && typeof d === 'object' ? d : null;
}

/**
 * modelBehind reports whether a session view (GET /v1/sessions, its
 * session, a model message's) says the collector has yet to model some of
 * the session's stored events: its derived_seq (the last event the model
 * reflects) short of its last_seq (the last event stored). A view without
 * both says nothing: false. The session page (SessionModel.behind) and the
 * session list read it from here.
 */
export function modelBehind(s) {
  const v = obj(s);
  return typeof v.derived_seq === 'number' && typeof v.last_seq === 'number' && v.derived_seq < v.last_seq;
}

/** toolSummary returns the one line that best says what a tool call did. */
export function toolSummary(input) {
  if (typeof input === 'string') return input;
  if (!input || typeof input !== 'object') return '';
  const i = obj(input);
  for (const k of ['command', 'file_path', 'notebook_path', 'path', 'pattern', 'url', 'query', 'description', 'prompt', 'subject', 'cmd']) {
    if (typeof i[k] === 'string' && i[k]) return i[k];
  }
  if (Array.isArray(i.command)) return i.command.filter((x) => typeof x === 'string').join(' ');
  try {
    const s = JSON.stringify(input);
    return s && s !== '{}' ? s.slice(0, 300) : '';
  } catch { return ''; }
}

/** eventSummary returns the line shown for an event in lists. */
export function eventSummary(ev) {
  const p = payloadOf(ev);
  switch (ev.event) {
    case 'UserPromptSubmit': return str(p.prompt);
    case 'PreToolUse': case 'PostToolUse': case 'PostToolUseFailure': case 'PermissionRequest': case 'PermissionDenied':
      return (ev.event === 'PostToolUseFailure' && str(p.error) ? str(p.error).split('\n')[0] + ' — ' : '') + toolSummary(p.tool_input);
    case 'PostToolBatch': {
      const calls = Array.isArray(p.tool_calls) ? p.tool_calls : [];
      return calls.map((c) => str(obj(c).tool_name)).join(', ');
    }
    case 'SubagentStart': return typeof ev.agent_type === 'string' ? ev.agent_type : str(p.agent_type);
    case 'SubagentStop': case 'Stop': return str(p.last_assistant_message);
    case 'StopFailure': return str(p.error) || str(p.error_details);
    case 'Notification': return str(p.message);
    case 'SessionStart': return str(p.source);
    case 'SessionEnd': return str(p.reason);
    case 'PreCompact': return str(p.trigger) + (str(p.custom_instructions) ? ': ' + str(p.custom_instructions) : '');
    case 'PostCompact': return str(p.compact_summary);
    case 'InstructionsLoaded': return str(p.file_path);
    case 'StatusLine': {
      const s = snapshotOf(ev);
      return s ? `context ${Number.isFinite(s.pct) ? s.pct.toFixed(0) + '%' : '–'} · $${Number.isFinite(s.cost) ? s.cost.toFixed(2) : '–'}` : '';
    }
  }
  return '';
}

/** eventName is the name an event is listed and filtered by. */
export function eventName(ev) {
  return typeof ev.event === 'string' && ev.event ? ev.event : ev.kind === 'statusline' ? 'StatusLine' : '';
}

/** snapshotOf reads a statusLine event's context window and cost, or null. */
export function snapshotOf(ev) {
  if (ev.kind !== 'statusline' && ev.event !== 'StatusLine') return null;
  const p = payloadOf(ev);
  const cw = obj(p.context_window);
  const cost = obj(p.cost);
  const tokens = num(cw.total_input_tokens);
  const size = num(cw.context_window_size);
  let pct = num(cw.used_percentage);
  if (!Number.isFinite(pct) && Number.isFinite(tokens) && size > 0) pct = (tokens / size) * 100;
  return { t: ms(ev.time), tokens, size, pct, cost: num(cost.total_cost_usd) };
}

// markerOf returns the timeline marker an event draws, or null. A copy
// (what a transcript or a rollout recorded of what a hook delivered) draws
// one that only the raw view shows (markerMatches).
function markerOf(ev, t, agent) {
  const p = payloadOf(ev);
  const mk = (kind, label) => ({ t, kind, agent, seq: ev.seq, label: label || '', event: ev.event, copy: ev.copy === true });
  switch (ev.event) {
    case 'SessionStart': return mk(p.source === 'compact' ? 'compact' : 'start', str(p.source));
    case 'SessionEnd': return mk('end', str(p.reason));
    // The client's own <task-notification> prompt (2.1.332) is no prompt
    // of the user's: the collector marks it (task_notification), and the
    // model marks the subagent it names (notified_at).
    case 'UserPromptSubmit': return ev.task_notification === true ? null : mk('prompt', str(p.prompt));
    case 'Stop': case 'SubagentStop': return mk('stop', '');
    case 'StopFailure': return mk('stopfail', str(p.error));
    case 'PreCompact': case 'PostCompact': return mk('compact', str(p.trigger));
    case 'Notification': return mk('notify', str(p.message));
    case 'PermissionRequest': return mk('ask', str(p.tool_name));
  }
  return null;
}

/**
 * agentFrom turns an agent of the API into what the views read, keeping
 * the calls list of the agent it replaces.
 */
function agentFrom(r, old) {
  const id = r.agent_id;
  const type = r.agent_type === null || typeof r.agent_type === 'string' ? r.agent_type : null;
  return {
    id,
    // null: no event gave a type; '' is the compaction agent.
    type: id === MAIN ? 'main' : type,
    role: str(r.role),
    parent: id === MAIN ? null : typeof r.parent_agent_id === 'string' ? r.parent_agent_id : MAIN,
    spawn: str(r.spawn_tool_use_id),
    depth: Number.isInteger(r.depth) ? r.depth : id === MAIN ? 0 : 1,
    start: ms(r.started_at),
    stop: ms(r.stopped_at),
    description: str(r.description),
    // The name the client shows for a subagent (Codex's nickname), '' for none.
    nickname: str(r.nickname),
    // A subagent that ran on after its spawning call returned (2.1.332
    // background agents), and the client's latest task notification of it.
    background: r.background === true,
    notifiedAt: ms(r.notified_at),
    notificationStatus: str(r.notification_status),
    events: count(r.events),
    toolCount: count(r.tool_count),
    failures: count(r.failures),
    denials: count(r.denials),
    rejected: count(r.rejected),
    lastMessage: str(r.last_message),
    // A subagent stopped by a failed model request (StopFailure): the
    // error kind the client named (rate_limit, unknown, …), '' otherwise.
    stopError: str(r.stop_error),
    calls: old ? old.calls : [],
    raw: r,
    asOf: -1,
  };
}

/** strList keeps the strings of a list, [] for anything else. */
function strList(v) {
  return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
}

/** callFrom turns a tool call of the API into what the views read. */
function callFrom(r) {
  const start = ms(r.started_at);
  let decision = null;
  if (r.decision && typeof r.decision === 'object' && !Array.isArray(r.decision)) decision = r.decision;
  else if (typeof r.decision === 'string' && r.decision) decision = { action: r.decision };
  return {
    id: r.tool_use_id,
    agent: typeof r.agent_id === 'string' ? r.agent_id : MAIN,
    tool: str(r.tool_name),
    family: str(r.family) || 'other',
    // The call's meaning (package classify): subtype, its group, effect
    // and importance, the files it touched, a shell command's steps.
    subtype: str(r.subtype),
    group: str(r.subtype_group),
    effect: str(r.effect),
    importance: str(r.importance),
    entity: str(r.entity_name),
    filesRead: strList(r.files_read),
    filesWritten: strList(r.files_written),
    command: r.command && typeof r.command === 'object' && !Array.isArray(r.command) ? r.command : null,
    status: str(r.status) || 'pending',
    // The collector's verdict (an error or an interruption): what the
    // views count and mark as failed.
    failed: r.failed === true,
    start,
    end: ms(r.ended_at),
    dur: num(r.duration_ms),
    input: r.input,
    error: str(r.error),
    decision,
    promptId: str(r.prompt_id),
    parentCall: str(r.parent_tool_use_id),
    spawned: str(r.spawned_agent_id),
    raw: r,
    row: 0,
    asOf: -1,
  };
}

/** signalsFrom reads the agents of a GET …/signals answer: agent id → its signals and failures in a row. */
export function signalsFrom(body) {
  const out = new Map();
  const agents = body && Array.isArray(body.agents) ? body.agents : [];
  for (const a of agents) {
    if (!a || typeof a !== 'object' || typeof a.agent_id !== 'string') continue;
    const signals = (Array.isArray(a.signals) ? a.signals : []).filter((s) => s && typeof s === 'object').map((s) => ({
      kind: str(s.kind), detail: str(s.detail), calls: strList(s.calls),
    }));
    out.set(a.agent_id, { signals, failuresInARow: count(a.failures_in_a_row) });
  }
  return out;
}

export class SessionModel {
  /** setSignals keeps the collector's signals; it reports whether they changed. */
  setSignals(body) {
    const next = signalsFrom(body);
    if (JSON.stringify([...next]) === JSON.stringify([...this.signals])) return false;
    this.signals = next;
    this.version++;
    return true;
  }

  constructor(id) {
    this.id = id;
    /** session is the collector's view of the session (GET /v1/sessions/{id}), or null. */
    this.session = null;
    this.sessionAsOf = -1;
    this.agents = new Map();
    this.calls = new Map();
    // The stored events, by seq, and the timeline's markers and the
    // statusLine snapshots they carry.
    this.events = [];
    this.bySeq = new Map();
    // also_read_from of hook events as the stream's copies said (copy_of),
    // by seq: kept for an event the listing brings later.
    this.alsoBySeq = new Map();
    this.byCall = new Map(); // tool_use_id -> seqs of its events, for the inspector
    this.names = new Set(); // event names seen, for the event filter
    this.markers = [];
    this.snaps = [];
    this.t0 = Infinity;
    this.t1 = -Infinity;
    this.version = 0;
    this.lastSeq = 0;
    /** signals are the collector's signals per agent id (GET …/signals), empty until read. */
    this.signals = new Map();
    this._layout = null;
    this._stats = null;
    /** expanded are the agents whose lanes show every row of their overlapping calls (toggleRows). */
    this.expanded = new Set();
    this._unsorted = false;
  }

  _time(t) {
    if (!Number.isFinite(t)) return;
    if (t < this.t0) this.t0 = t;
    if (t > this.t1) this.t1 = t;
  }

  /** setSession applies the collector's session view, as of asOf like upsertAgents. */
  setSession(s, asOf = 0) {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return;
    if (this.session && this.sessionAsOf > asOf) return;
    this.session = s;
    this.sessionAsOf = asOf;
    this._time(ms(s.first_event_at));
    this._time(ms(s.last_event_at));
    this.version++;
  }

  /**
   * upsertAgents applies agents of the API, replacing those with the same
   * agent_id. asOf is the event seq the list reflects (a listing's
   * derived_seq): an agent already known as of a later seq is kept, so a
   * listing read before a live change cannot undo it.
   */
  upsertAgents(list, asOf = 0) {
    if (!Array.isArray(list)) return;
    for (const raw of list) {
      const r = obj(raw);
      if (typeof r.agent_id !== 'string') continue;
      const old = this.agents.get(r.agent_id);
      if (old && old.asOf > asOf) continue;
      const a = agentFrom(r, old);
      a.asOf = asOf;
      this.agents.set(a.id, a);
      this._time(a.start);
      this._time(a.stop);
    }
    this.version++;
  }

  /** upsertCalls applies tool calls of the API, as upsertAgents does agents. */
  upsertCalls(list, asOf = 0) {
    if (!Array.isArray(list)) return;
    for (const raw of list) {
      const r = obj(raw);
      if (typeof r.tool_use_id !== 'string' || !r.tool_use_id) continue;
      const old = this.calls.get(r.tool_use_id);
      if (old && old.asOf > asOf) continue;
      const c = callFrom(r);
      c.asOf = asOf;
      if (old) {
        const owner = this.agents.get(old.agent);
        if (owner) owner.calls = owner.calls.filter((x) => x !== old);
      }
      this.calls.set(c.id, c);
      this._agentOf(c.agent).calls.push(c);
      this._time(c.start);
      this._time(c.end);
    }
    this.version++;
  }

  // _agentOf returns the agent a call names, a placeholder until the
  // collector's agent arrives (a live call can come before its agent).
  _agentOf(id) {
    let a = this.agents.get(id);
    if (!a) {
      a = agentFrom({ agent_id: id }, null);
      a.placeholder = true;
      this.agents.set(id, a);
    }
    return a;
  }

  /**
   * applyModel applies a model message of the live stream: {session,
   * agents, tool_calls}, each part optional. Its rows are as the collector
   * read them when it sent the message, after any listing the page read
   * before (asOf Infinity); a later change comes as another message.
   */
  applyModel(msg, asOf = Infinity) {
    const m = obj(msg);
    if (m.session_id !== undefined && m.session_id !== this.id) return false;
    if (m.session && typeof m.session === 'object') this.setSession(m.session, asOf);
    this.upsertAgents(m.agents, asOf);
    this.upsertCalls(m.tool_calls, asOf);
    return true;
  }

  /** settle restores seq order after events were added out of order; call it before reading events. */
  settle() {
    if (!this._unsorted) return;
    this.events.sort((a, b) => a.seq - b.seq);
    this._unsorted = false;
  }

  /** addEvent adds one stored event; it returns false for an event already seen or of another session. */
  addEvent(ev) {
    if (!ev || typeof ev !== 'object') return false;
    const seq = typeof ev.seq === 'number' ? ev.seq : NaN;
    if (!Number.isFinite(seq) || this.bySeq.has(seq)) return false;
    if (ev.session_id !== undefined && ev.session_id !== this.id) return false;
    this._also(ev, this.alsoBySeq.get(seq));
    this.bySeq.set(seq, ev);
    // Pages and the stream interleave: append, and sort once in settle().
    if (seq < this.lastSeq) this._unsorted = true;
    this.events.push(ev);
    this.lastSeq = Math.max(this.lastSeq, seq);
    try {
      const t = ms(ev.time);
      this._time(t);
      this.names.add(eventName(ev));
      const agent = typeof ev.agent_id === 'string' ? ev.agent_id : MAIN;
      const snap = snapshotOf(ev);
      if (snap) this.snaps.push(snap);
      const mk = markerOf(ev, t, agent);
      if (mk) this.markers.push(mk);
      const call = typeof ev.tool_use_id === 'string' ? ev.tool_use_id : '';
      if (call) this._index(call, seq);
      if (ev.event === 'PostToolBatch') {
        const list = payloadOf(ev).tool_calls;
        if (Array.isArray(list)) for (const b of list) if (str(obj(b).tool_use_id)) this._index(obj(b).tool_use_id, seq);
      }
    } catch (e) {
      console.error('hookwatch: cannot show event', seq, e);
    }
    this.version++;
    return true;
  }

  /**
   * applyCopyOf takes what a copy the stream sent says of the hook's
   * events it copies (copy_of: each one's seq and its also_read_from as
   * the collector serves it now), so that an event on screen is marked
   * without a reload; one not loaded yet is marked when it comes. It
   * returns whether a shown event changed.
   */
  applyCopyOf(ev) {
    const list = ev && typeof ev === 'object' && Array.isArray(ev.copy_of) ? ev.copy_of : [];
    let changed = false;
    for (const raw of list) {
      const c = obj(raw);
      if (typeof c.seq !== 'number' || !Array.isArray(c.also_read_from)) continue;
      const kept = this.alsoBySeq.get(c.seq);
      if (!kept || kept.length < c.also_read_from.length) this.alsoBySeq.set(c.seq, c.also_read_from);
      const shown = this.bySeq.get(c.seq);
      if (shown && this._also(shown, c.also_read_from)) changed = true;
    }
    if (changed) this.version++;
    return changed;
  }

  // _also sets ev's also_read_from to also when also names more files: the
  // files that recorded a happening only grow, and a listing read before a
  // copy arrived must not undo what the stream said of it.
  _also(ev, also) {
    if (!Array.isArray(also)) return false;
    const had = Array.isArray(ev.also_read_from) ? ev.also_read_from : [];
    if (also.length <= had.length) return false;
    ev.also_read_from = also;
    return true;
  }

  _index(call, seq) {
    const list = this.byCall.get(call);
    if (!list) this.byCall.set(call, [seq]);
    else if (!list.includes(seq)) list.push(seq);
  }

  /** eventsOf returns the loaded events of a call, by seq. */
  eventsOf(callID) {
    return (this.byCall.get(callID) || []).map((s) => this.bySeq.get(s)).filter(Boolean).sort((a, b) => a.seq - b.seq);
  }

  /**
   * behind returns how far the collector's model of the session is behind
   * its stored events, as the collector's session view says: null when the
   * view's derived_seq (the last event the model reflects) has reached its
   * last_seq (the last event stored), or when no view says; else {events},
   * the loaded events past derived_seq, which the model has yet to take
   * (0 while they are not loaded). The collector stores events first and
   * models them in rounds after: a large import or a busy collector shows
   * a session's events before its calls and agents.
   */
  behind() {
    const s = this.session;
    if (!modelBehind(s)) return null;
    let events = 0;
    for (const ev of this.events) if (ev.seq > s.derived_seq) events++;
    return { events };
  }

  /** over reports whether the collector's status says the session is over (ended or failed). */
  over() {
    const st = this.session && this.session.status;
    return st === 'ended' || st === 'failed';
  }

  /**
   * noOutcome reports whether a call is one the session ended without: the
   * collector's status is still pending (no outcome was reported) but the
   * session is over. The status stays the collector's; only how it is
   * drawn and worded changes.
   */
  noOutcome(c) {
    return c.status === 'pending' && this.over();
  }

  /**
   * callEnd returns where a call's bar ends: its end; while it is pending,
   * the session's last activity (t1); and once the session is over without
   * an outcome, where its agent was last seen (its stop, when after the
   * call's start) or else the session's end, never beyond.
   */
  callEnd(c) {
    if (Number.isFinite(c.end) || c.status !== 'pending' || !this.over()) return endOf(c, this.t1);
    const s = this.session;
    let end = ms(s.ended_at);
    if (!Number.isFinite(end)) end = ms(s.last_event_at);
    if (!Number.isFinite(end)) end = this.t1;
    const a = this.agents.get(c.agent);
    if (a && Number.isFinite(a.stop) && a.stop >= c.start && a.stop < end) end = a.stop;
    return Math.max(end, c.start);
  }

  /** span returns the session's [start, end] in ms; an empty model spans the last minute. */
  span() {
    if (!Number.isFinite(this.t0)) {
      const now = Date.now();
      return [now - 60000, now];
    }
    return [this.t0, Math.max(this.t1, this.t0 + 1)];
  }

  /** toggleRows shows every row of an agent's overlapping calls, or MAX_ROWS again. */
  toggleRows(id) {
    if (this.expanded.has(id)) this.expanded.delete(id); else this.expanded.add(id);
    this._layout = null;
  }

  /**
   * layout returns the agent tree in display order (depth-first, children by
   * start), each agent with its calls sorted by start and packed into
   * sub-rows so parallel calls of one agent do not hide each other: at most
   * MAX_ROWS, or MAX_EXPANDED for an agent in expanded. A call that finds
   * no free row is drawn over another (stacked: true); an agent's stacked
   * counts them, and overflow lists where they are: [{start, end, n}],
   * overlapping stacked calls together. The tree is the collector's
   * (parent_agent_id); depth is the position in what is drawn.
   */
  layout() {
    this.settle();
    if (this._layout && this._layout.version === this.version) return this._layout;
    if (!this.agents.has(MAIN)) this._agentOf(MAIN);
    const agents = [...this.agents.values()];
    const children = new Map(agents.map((a) => [a.id, []]));
    const parent = new Map();
    for (const a of agents) {
      if (a.id === MAIN) parent.set(a.id, null);
      else parent.set(a.id, a.parent !== a.id && this.agents.has(a.parent) ? a.parent : MAIN);
    }
    // A parent cycle (a corrupt answer) must not hang or hide the tree:
    // an agent whose ancestry returns to itself hangs off main.
    for (const a of agents) {
      let p = parent.get(a.id), steps = 0;
      while (p != null && p !== MAIN && steps++ < agents.length) {
        if (p === a.id) { parent.set(a.id, MAIN); break; }
        p = parent.get(p);
      }
    }
    for (const a of agents) {
      const p = parent.get(a.id);
      if (p != null) children.get(p).push(a);
    }
    for (const list of children.values()) list.sort((x, y) => (x.start - y.start) || (x.id < y.id ? -1 : 1));
    const order = [];
    const seen = new Set();
    const visit = (a, depth) => {
      if (seen.has(a.id)) return;
      seen.add(a.id);
      a.level = depth;
      a.parentId = parent.get(a.id);
      a.children = children.get(a.id);
      order.push(a);
      for (const c of a.children) visit(c, depth + 1);
    };
    visit(this.agents.get(MAIN), 0);
    for (const a of agents) if (!seen.has(a.id)) visit(a, 1);
    for (const a of order) {
      a.calls.sort((x, y) => (x.start - y.start) || (x.id < y.id ? -1 : 1));
      const cap = this.expanded.has(a.id) ? MAX_EXPANDED : MAX_ROWS;
      const rowEnd = [];
      const overflow = [];
      let maxDur = 0, stacked = 0;
      for (const c of a.calls) {
        const s = c.start, e = this.callEnd(c);
        let row = rowEnd.findIndex((end) => end <= s);
        c.stacked = false;
        if (row < 0) {
          if (rowEnd.length < cap) { row = rowEnd.length; rowEnd.push(e); } else {
            row = rowEnd.indexOf(Math.min(...rowEnd));
            c.stacked = true;
            stacked++;
            const last = overflow[overflow.length - 1];
            if (last && s <= last.end) { last.n++; last.end = Math.max(last.end, e); } else overflow.push({ start: s, end: e, n: 1 });
          }
        }
        rowEnd[row] = Math.max(rowEnd[row] ?? -Infinity, e);
        c.row = row;
        maxDur = Math.max(maxDur, e - s);
      }
      a.rows = Math.max(1, rowEnd.length);
      a.maxDur = maxDur;
      a.stacked = stacked;
      a.overflow = overflow;
    }
    this.markers.sort((x, y) => x.t - y.t);
    this._layout = { version: this.version, order };
    return this._layout;
  }

  /**
   * numbers returns the rows of the per-tool and per-agent tables: the
   * collector's counts (the session's tools, in the collector's order;
   * each agent's own calls, most first), with the failure rate they make
   * and the p50 and p95 of the durations of the calls loaded. Agents
   * without calls are left out.
   */
  numbers() {
    if (this._numbers && this._numbers.version === this.version) return this._numbers;
    const durs = { agents: new Map(), tools: new Map() };
    for (const c of this.calls.values()) {
      // The client's own duration: a call that never ran has none.
      if (!Number.isFinite(c.dur)) continue;
      for (const [m, k] of [[durs.agents, c.agent], [durs.tools, c.tool]]) {
        const l = m.get(k);
        if (l) l.push(c.dur); else m.set(k, [c.dur]);
      }
    }
    const row = (key, n, ds) => {
      const d = ds ? ds.sort((a, b) => a - b) : [];
      const calls = n.calls || 0, failures = n.failures || 0;
      return { key, count: calls, failures, denials: n.denials || 0, rejected: n.rejected || 0, rate: calls ? failures / calls : 0, p50: quantile(d, 0.5), p95: quantile(d, 0.95) };
    };
    const most = (a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    const tools = (Array.isArray(this.session?.tools) ? this.session.tools : []).map(obj)
      .map((t) => row(str(t.tool_name), { calls: count(t.calls), failures: count(t.failures), denials: count(t.denials), rejected: count(t.rejected) }, durs.tools.get(str(t.tool_name))));
    const agents = [...this.agents.values()].filter((a) => a.toolCount > 0)
      .map((a) => row(a.id, { calls: a.toolCount, failures: a.failures, denials: a.denials, rejected: a.rejected }, durs.agents.get(a.id))).sort(most);
    this._numbers = { version: this.version, tools, agents };
    return this._numbers;
  }

  /**
   * turns groups the loaded events and the collector's calls by prompt_id,
   * in time order: the per-turn view. A subagent's event or call without
   * a prompt id (Codex's) goes to the turn of the call that spawned its
   * agent (_spawnPrompts). A turn the client began itself, with
   * a task notification (the collector's task_notification), is marked
   * notification and takes no prompt from it.
   */
  turns() {
    this.settle();
    const turns = new Map();
    const turn = (id) => {
      let t = turns.get(id);
      if (!t) {
        t = { id, prompt: '', user: false, notification: false, compaction: false, start: Infinity, end: -Infinity, seqs: [], agents: new Set(), calls: [] };
        turns.set(id, t);
      }
      return t;
    };
    const span = (t, at) => {
      if (at < t.start) t.start = at;
      if (at > t.end) t.end = at;
    };
    const spawnedIn = this._spawnPrompts();
    for (const ev of this.events) {
      const agent = typeof ev.agent_id === 'string' ? ev.agent_id : MAIN;
      const own = typeof ev.prompt_id === 'string' ? ev.prompt_id : str(payloadOf(ev).prompt_id);
      const t = turn(own || spawnedIn(agent));
      t.seqs.push(ev.seq);
      t.agents.add(agent);
      span(t, ms(ev.time));
      if (ev.event === 'PreCompact') t.compaction = true;
      // A subagent's own prompt (Codex's: the task it was given) is no
      // prompt of the user's.
      if (ev.event !== 'UserPromptSubmit' || (!own && agent !== MAIN)) continue;
      if (ev.task_notification === true) t.notification = true;
      else {
        t.user = true;
        if (!t.prompt) t.prompt = str(payloadOf(ev).prompt);
      }
    }
    for (const c of this.calls.values()) {
      const t = turn(c.promptId || spawnedIn(c.agent));
      t.calls.push(c);
      t.agents.add(c.agent);
      span(t, c.start);
    }
    return [...turns.values()].sort((a, b) => a.start - b.start);
  }

  /**
   * _spawnPrompts returns agent id → the prompt id of the call that spawned
   * the agent (its spawn tool_use_id), up the chain of spawning agents
   * while a call has none; '' for the main agent and when unknown. A
   * Claude Code subagent's events carry the prompt id of the turn that
   * spawned it; a Codex subagent's carry none (its turn is its own): this
   * puts them in the same turn, from the collector's agents and calls.
   */
  _spawnPrompts() {
    const memo = new Map();
    const of = (id) => {
      if (id === MAIN || typeof id !== 'string') return '';
      if (memo.has(id)) return memo.get(id);
      memo.set(id, ''); // a spawn cycle (a corrupt answer) ends here
      const a = this.agents.get(id);
      const c = a && a.spawn ? this.calls.get(a.spawn) : null;
      const p = !c ? '' : c.promptId || (c.agent !== id ? of(c.agent) : '');
      memo.set(id, p);
      return p;
    };
    return of;
  }

  /**
   * turnNumbers numbers the user's prompts in the order of their turns
   * (turns()), by prompt id, as the collector counts prompts: a turn the
   * client began to report a background task is not one of them, nor a
   * turn that submitted no prompt (a /compact). Every view that says "turn
   * N" reads it; a view that has turns() at hand passes them.
   */
  turnNumbers(turns = this.turns()) {
    const out = new Map();
    for (const t of turns) if (t.id && t.user) out.set(t.id, out.size + 1);
    return out;
  }

  /** toolNames returns the distinct tool names, sorted. */
  toolNames() {
    return [...new Set([...this.calls.values()].map((c) => c.tool).filter(Boolean))].sort();
  }

  /** eventNames returns the distinct event names, sorted. */
  eventNames() {
    return [...this.names].filter(Boolean).sort();
  }

  /** eventStatus is the collector's status of the call an event belongs to, '' for other events. */
  eventStatus(ev) {
    const id = ev.tool_use_id;
    if (typeof id === 'string' && id) return this.calls.get(id)?.status || '';
    return '';
  }
}

/**
 * callStatusLabel is how a call's status reads: the collector's status,
 * but "no outcome reported" for a call still pending when its session is
 * over (SessionModel.noOutcome), which no longer runs.
 */
export function callStatusLabel(c, model) {
  return model && model.noOutcome(c) ? 'no outcome reported' : c.status;
}

/** MAX_ROWS is how many rows a lane gives an agent's overlapping calls; MAX_EXPANDED once expanded. */
export const MAX_ROWS = 4;
export const MAX_EXPANDED = 200;

/** endOf returns a call's end, or until (the session's last activity) while it runs. */
export function endOf(c, until) {
  if (Number.isFinite(c.end)) return Math.max(c.end, c.start);
  if (c.status === 'pending') return Math.max(until, c.start);
  return c.start;
}

/**
 * contextPoints returns the points of the context curve: the statusLine
 * snapshots, and the context a resume or fork began with (the session
 * model's runs), which needs no status line.
 */
export function contextPoints(model) {
  const pts = [...model.snaps];
  const runs = model.session && Array.isArray(model.session.runs) ? model.session.runs : [];
  for (const r of runs) {
    const rs = obj(obj(r).resume);
    const tokens = num(rs.context_tokens);
    if (Number.isFinite(tokens)) pts.push({ t: ms(rs.at), tokens, size: NaN, pct: NaN, cost: NaN, resume: true });
  }
  return pts.filter((p) => Number.isFinite(p.t)).sort((a, b) => a.t - b.t);
}

/** agentEnd returns when an agent stopped, or until (the session's last activity) while it runs. */
export function agentEnd(a, until) {
  return Number.isFinite(a.stop) ? a.stop : until;
}

/** durationOf returns a call's duration in ms: the collector's duration_ms, else its span. */
export function durationOf(c) {
  if (Number.isFinite(c.dur)) return c.dur;
  if (Number.isFinite(c.end) && Number.isFinite(c.start)) return c.end - c.start;
  return NaN;
}

/**
 * FAILED is the status filter of the calls the collector says failed (its
 * failed: an error or an interruption), which is no status of its own.
 */
export const FAILED = 'failed';

/**
 * Filters select what the session view shows. Empty fields select
 * everything: agent is an agent id ('' the main agent, null all), tool a tool
 * name, event a hook event name, status a call status or FAILED. raw lists every
 * stored event, the copies too: the records read from a transcript or a
 * rollout of what a hook delivered (the collector marks them copy).
 */
export function emptyFilters() {
  return { agent: null, tool: '', event: '', status: '', subtype: '', effect: '', raw: false };
}

/** callMatches reports whether a call passes the filters. */
export function callMatches(c, f) {
  if (f.agent != null && c.agent !== f.agent) return false;
  if (f.tool && c.tool !== f.tool) return false;
  if (f.status && !(f.status === FAILED ? c.failed : c.status === f.status)) return false;
  if (f.subtype && c.subtype !== f.subtype) return false;
  if (f.effect && c.effect !== f.effect) return false;
  if (f.event && !isToolEvent(f.event)) return false;
  return true;
}

/**
 * narrowsLanes reports whether the filters, the agent filter apart, hide
 * some of what an agent's lane holds (its calls, its markers): a lane they
 * leave empty has nothing to show. The raw view only adds copies.
 */
export function narrowsLanes(f) {
  return !!(f.tool || f.event || f.status || f.subtype || f.effect);
}

/** markerMatches reports whether a marker passes the filters. */
export function markerMatches(m, f) {
  if (!f.raw && m.copy) return false;
  if (f.agent != null && m.agent !== f.agent) return false;
  if (f.tool || f.status || f.subtype || f.effect) return false;
  if (f.event && m.event !== f.event) return false;
  return true;
}

/** eventMatches reports whether an event passes the filters. */
export function eventMatches(ev, f, model) {
  if (!f.raw && ev.copy === true) return false;
  if (f.agent != null && (ev.agent_id || '') !== f.agent) return false;
  if (f.tool && ev.tool_name !== f.tool) return false;
  if (f.event && eventName(ev) !== f.event) return false;
  if (f.status === FAILED ? !model.calls.get(ev.tool_use_id)?.failed : f.status && model.eventStatus(ev) !== f.status) return false;
  if (f.subtype || f.effect) {
    const c = ev.tool_use_id ? model.calls.get(ev.tool_use_id) : null;
    if (!c || (f.subtype && c.subtype !== f.subtype) || (f.effect && c.effect !== f.effect)) return false;
  }
  return true;
}

/** callsTouching returns the calls other than id that read or wrote path. */
export function callsTouching(model, path, id) {
  const out = [];
  for (const c of model.calls.values()) {
    if (c.id !== id && (c.filesRead.includes(path) || c.filesWritten.includes(path))) out.push(c);
  }
  return out.sort((x, y) => x.start - y.start);
}

/**
 * outputOf returns what a call's events recorded of its output: the
 * tool_response of its PostToolUse, or of its entry in a PostToolBatch,
 * and whether there was one.
 */
export function outputOf(model, callID) {
  let batch;
  for (const ev of model.eventsOf(callID)) {
    const p = payloadOf(ev);
    if (ev.event === 'PostToolUse' && p.tool_response !== undefined) return { found: true, value: p.tool_response };
    if (ev.event === 'PostToolBatch' && Array.isArray(p.tool_calls)) {
      const b = p.tool_calls.find((x) => obj(x).tool_use_id === callID);
      if (b && obj(b).tool_response !== undefined) batch = obj(b).tool_response;
    }
  }
  return batch !== undefined ? { found: true, value: batch } : { found: false, value: undefined };
}
