// The session model: agents, tool calls, markers, turns and statusLine
// snapshots of one session, built from its stored events and enriched with
// the collector's attribution (/agents, /tool-calls) when it has it.
//
// Deriving everything from events is what keeps the dashboard working
// against a collector without attribution endpoints, and what lets a live
// event update the view at once, without a refetch. Events are hostile: any
// field may be missing or of the wrong type, and nothing here may throw.

import { ms, familyOf, quantile, isFailure } from './format.js';

/** MAIN is the id of the main agent. */
export const MAIN = '';

const TOOL_EVENTS = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'PermissionDenied', 'PostToolBatch']);
export const isToolEvent = (name) => TOOL_EVENTS.has(name);

const obj = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});
const str = (v) => (typeof v === 'string' ? v : '');
const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);

/** payloadOf returns the payload object of a stored event. */
export function payloadOf(ev) {
  return obj(obj(ev?.envelope).payload);
}

/** decisionOf returns the policy decision recorded with an event, or null. */
export function decisionOf(ev) {
  const d = obj(ev?.envelope).decision;
  return d && typeof d === 'object' ? d : null;
}

function isDeny(decision) {
  return decision != null && decision.action === 'deny' && decision.enforced !== false;
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
export function eventSummary(ev, model) {
  const p = payloadOf(ev);
  switch (ev.event) {
    case 'UserPromptSubmit': return str(p.prompt);
    case 'PreToolUse': case 'PostToolUse': case 'PostToolUseFailure': case 'PermissionRequest': case 'PermissionDenied':
      return (ev.event === 'PostToolUseFailure' && str(p.error) ? str(p.error).split('\n')[0] + ' — ' : '') + toolSummary(p.tool_input);
    case 'PostToolBatch': {
      const calls = Array.isArray(p.tool_calls) ? p.tool_calls : [];
      return calls.map((c) => str(obj(c).tool_name)).join(', ');
    }
    case 'SubagentStart': return typeOf(ev);
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

function typeOf(ev) {
  if (typeof ev.agent_type === 'string') return ev.agent_type;
  return str(payloadOf(ev).agent_type);
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

function newAgent(id) {
  return {
    id, type: id === MAIN ? 'main' : null, parent: id === MAIN ? null : undefined, spawn: '', depth: id === MAIN ? 0 : 1,
    start: NaN, stop: NaN, calls: [], failures: 0, denials: 0, events: 0, description: '', server: false,
  };
}

function newCall(id) {
  return {
    id, agent: MAIN, tool: '', family: '', serverFamily: '', status: 'pending', start: NaN, end: NaN, dur: NaN,
    input: undefined, output: undefined, hasOutput: false, error: '', decision: null, pre: 0, post: 0, batch: 0,
    parentCall: '', promptId: '', spawned: '', server: false, owner: null,
  };
}

export class SessionModel {
  constructor(id) {
    this.id = id;
    this.events = [];
    this.bySeq = new Map();
    this.agents = new Map([[MAIN, newAgent(MAIN)]]);
    this.calls = new Map();
    this.markers = [];
    this.snaps = [];
    this.turns = new Map();
    this.t0 = Infinity;
    this.t1 = -Infinity;
    this.version = 0;
    this.lastSeq = 0;
    this._layout = null;
    this._stats = null;
    this._unsorted = false;
  }

  /** settle restores seq order after events were added out of order; call it before reading events. */
  settle() {
    if (!this._unsorted) return;
    this.events.sort((a, b) => a.seq - b.seq);
    for (const t of this.turns.values()) t.seqs.sort((a, b) => a - b);
    this._unsorted = false;
  }

  agent(id) {
    id = typeof id === 'string' ? id : MAIN;
    let a = this.agents.get(id);
    if (!a) {
      a = newAgent(id);
      this.agents.set(id, a);
    }
    return a;
  }

  call(id) {
    let c = this.calls.get(id);
    if (!c) {
      c = newCall(id);
      this.calls.set(id, c);
    }
    return c;
  }

  /**
   * _assign makes agentID the agent of call c, moving it between the
   * agents' lists. A call can exist before anything says whose it is (a
   * subagent names its spawning call first): owner tracks which list, if
   * any, holds it.
   */
  _assign(c, agentID) {
    c.agent = agentID;
    if (c.owner === agentID) return;
    if (c.owner !== null) {
      const old = this.agents.get(c.owner);
      if (old) old.calls = old.calls.filter((x) => x !== c);
    }
    this.agent(agentID).calls.push(c);
    c.owner = agentID;
  }

  /** add folds one stored event into the model; it returns false for an event already seen. */
  add(ev) {
    if (!ev || typeof ev !== 'object') return false;
    const seq = typeof ev.seq === 'number' ? ev.seq : NaN;
    if (!Number.isFinite(seq) || this.bySeq.has(seq)) return false;
    if (ev.session_id !== undefined && ev.session_id !== this.id) return false;
    this.bySeq.set(seq, ev);
    // Pages loaded in parallel arrive out of order: append, and sort once
    // in settle() rather than splice each event into place.
    if (seq < this.lastSeq) this._unsorted = true;
    this.events.push(ev);
    this.lastSeq = Math.max(this.lastSeq, seq);
    try {
      this._apply(ev);
    } catch (e) {
      console.error('hookwatch: cannot apply event', seq, e);
    }
    this.version++;
    return true;
  }

  _apply(ev) {
    const t = ms(ev.time);
    if (Number.isFinite(t)) {
      if (t < this.t0) this.t0 = t;
      if (t > this.t1) this.t1 = t;
    }
    const p = payloadOf(ev);
    const name = typeof ev.event === 'string' ? ev.event : str(p.hook_event_name);
    const agentID = typeof ev.agent_id === 'string' ? ev.agent_id : str(p.agent_id);
    const ag = this.agent(agentID);
    ag.events++;
    if (agentID !== MAIN) {
      const ty = typeOf(ev);
      if (ag.type == null && (typeof ev.agent_type === 'string' || typeof p.agent_type === 'string')) ag.type = ty;
      if (!(ag.start <= t)) ag.start = t;
      const meta = obj(obj(ev.envelope).subagent);
      if (typeof meta.toolUseId === 'string' && meta.toolUseId && !ag.spawn) this._link(ag, meta.toolUseId);
    } else if (!(ag.start <= t)) {
      ag.start = t;
    }
    if (!(ag.stop >= t)) ag.stop = t;

    const promptID = typeof ev.prompt_id === 'string' && ev.prompt_id ? ev.prompt_id : str(p.prompt_id);
    this._turn(promptID, ev, t, name, p, agentID);

    const snap = snapshotOf(ev);
    if (snap) {
      this.snaps.push(snap);
      return;
    }
    const marker = (kind, label) => this.markers.push({ t, kind, agent: agentID, seq: ev.seq, label: label || '', event: name });
    switch (name) {
      case 'SessionStart':
        marker(p.source === 'compact' ? 'compact' : 'start', str(p.source));
        break;
      case 'SessionEnd': marker('end', str(p.reason)); break;
      case 'UserPromptSubmit': marker('prompt', str(p.prompt)); break;
      case 'Stop': marker('stop', ''); break;
      case 'StopFailure': marker('stopfail', str(p.error)); break;
      case 'SubagentStart':
        ag.start = t;
        this._guessSpawn(ag, t);
        break;
      case 'SubagentStop':
        ag.stop = t;
        marker('stop', '');
        break;
      case 'PreCompact': case 'PostCompact': marker('compact', str(p.trigger)); break;
      case 'Notification': marker('notify', str(p.message)); break;
      case 'PreToolUse': {
        const c = this._toolEvent(ev, p, agentID, t, promptID);
        if (!c) break;
        if (!(c.start <= t)) c.start = t;
        c.pre = ev.seq;
        if (c.input === undefined) c.input = p.tool_input;
        const d = decisionOf(ev);
        if (d) {
          c.decision = d;
          if (isDeny(d)) {
            c.status = 'denied';
            c.end = c.start;
          }
        }
        break;
      }
      case 'PostToolUse': case 'PostToolUseFailure': {
        const c = this._toolEvent(ev, p, agentID, t, promptID);
        if (!c) break;
        c.post = ev.seq;
        c.end = t;
        const d = num(p.duration_ms);
        if (!Number.isFinite(c.start)) c.start = Number.isFinite(d) ? t - d : t;
        if (Number.isFinite(d)) c.dur = d;
        if (c.input === undefined) c.input = p.tool_input;
        if (name === 'PostToolUseFailure') {
          c.status = p.is_interrupt === true ? 'interrupted' : 'error';
          c.error = str(p.error) || (p.error !== undefined ? JSON.stringify(p.error) : '');
        } else {
          if (c.status === 'pending') c.status = 'ok';
          if (p.tool_response !== undefined) {
            c.output = p.tool_response;
            c.hasOutput = true;
          }
          const spawned = obj(p.tool_response).agentId;
          if (typeof spawned === 'string' && spawned) {
            c.spawned = spawned;
            this._link(this.agent(spawned), c.id);
          }
        }
        break;
      }
      case 'PermissionDenied': {
        const c = this._toolEvent(ev, p, agentID, t, promptID);
        if (!c) break;
        c.status = 'denied';
        if (!Number.isFinite(c.start)) c.start = t;
        c.end = t;
        c.error = str(p.reason);
        break;
      }
      case 'PermissionRequest': {
        marker('ask', str(p.tool_name));
        break;
      }
      case 'PostToolBatch': {
        const list = Array.isArray(p.tool_calls) ? p.tool_calls : [];
        for (const raw of list) {
          const b = obj(raw);
          const id = str(b.tool_use_id);
          if (!id) continue;
          const known = this.calls.has(id);
          const c = this.call(id);
          c.batch = ev.seq;
          if (known && (c.pre || c.post)) continue;
          // A call the client rejected before running it (an unknown or
          // disabled tool) has no Pre/Post events: only the batch tells.
          if (!c.server || c.owner === null) this._assign(c, agentID);
          if (!c.tool) c.tool = str(b.tool_name);
          c.input = b.tool_input;
          c.start = t;
          c.end = t;
          c.promptId = promptID;
          const resp = b.tool_response;
          if (typeof resp === 'string' && resp.includes('<tool_use_error>')) {
            // Rejected by the client before it ran (no PreToolUse).
            c.status = 'rejected';
            c.error = resp;
          } else if (c.status === 'pending') {
            c.status = 'ok';
          }
          if (resp !== undefined) { c.output = resp; c.hasOutput = true; }
          this._family(c);
        }
        break;
      }
    }
  }

  _toolEvent(ev, p, agentID, t, promptID) {
    const id = typeof ev.tool_use_id === 'string' && ev.tool_use_id ? ev.tool_use_id : str(p.tool_use_id);
    if (!id) return null;
    const c = this.call(id);
    // The collector's attribution, once merged, decides whose call it is.
    if (!c.server || c.owner === null) this._assign(c, agentID);
    if (!c.tool) c.tool = typeof ev.tool_name === 'string' && ev.tool_name ? ev.tool_name : str(p.tool_name);
    if (!c.promptId) c.promptId = promptID;
    this._family(c);
    return c;
  }

  _family(c) {
    c.family = c.serverFamily || familyOf(c.tool);
  }

  /** _link records that call spawned agent ag. */
  _link(ag, callID) {
    if (!callID || ag.id === MAIN) return;
    ag.spawn = callID;
    const c = this.call(callID);
    c.spawned = ag.id;
    if (!ag.server) ag.parent = undefined; // decided by the spawning call's agent at layout
  }

  /**
   * _guessSpawn links a subagent that just started to the earliest
   * unfinished call of the subagent tool (Agent, or Task in older clients)
   * asking for its type, until the call's PostToolUse names the agent.
   */
  _guessSpawn(ag, t) {
    if (ag.spawn) return;
    let best = null;
    for (const c of this.calls.values()) {
      if (c.spawned || (c.tool !== 'Agent' && c.tool !== 'Task') || c.post || !(c.start <= t)) continue;
      const want = str(obj(c.input).subagent_type);
      if (want && ag.type != null && want !== ag.type) continue;
      if (!best || c.start < best.start) best = c;
    }
    if (best) this._link(ag, best.id);
  }

  _turn(promptID, ev, t, name, p, agentID) {
    let turn = this.turns.get(promptID);
    if (!turn) {
      turn = { id: promptID, prompt: '', start: t, end: t, seqs: [], agents: new Set(), calls: new Set(), failures: 0, denials: 0 };
      this.turns.set(promptID, turn);
    }
    turn.seqs.push(ev.seq);
    turn.agents.add(agentID);
    if (t < turn.start || !Number.isFinite(turn.start)) turn.start = t;
    if (t > turn.end || !Number.isFinite(turn.end)) turn.end = t;
    if (name === 'UserPromptSubmit' && !turn.prompt) turn.prompt = str(p.prompt);
    const id = typeof ev.tool_use_id === 'string' && ev.tool_use_id ? ev.tool_use_id : '';
    if (id) turn.calls.add(id);
  }

  /** mergeAgents applies the collector's /agents answer. */
  mergeAgents(list) {
    if (!Array.isArray(list)) return;
    for (const raw of list) {
      const a = obj(raw);
      if (typeof a.agent_id !== 'string') continue;
      const ag = this.agent(a.agent_id);
      ag.server = true;
      if (typeof a.agent_type === 'string' && a.agent_id !== MAIN) ag.type = a.agent_type;
      if (a.agent_id !== MAIN && typeof a.parent_agent_id === 'string') ag.parent = a.parent_agent_id;
      if (typeof a.spawn_tool_use_id === 'string' && a.spawn_tool_use_id) {
        ag.spawn = a.spawn_tool_use_id;
        this.call(a.spawn_tool_use_id).spawned = ag.id;
      }
      if (typeof a.description === 'string') ag.description = a.description;
      const s = ms(a.started_at), e = ms(a.stopped_at);
      if (Number.isFinite(s)) ag.start = s;
      if (Number.isFinite(e)) ag.stop = e;
    }
    this.version++;
  }

  /** mergeCalls applies the collector's /tool-calls answer. */
  mergeCalls(list) {
    if (!Array.isArray(list)) return;
    for (const raw of list) {
      const r = obj(raw);
      if (typeof r.tool_use_id !== 'string' || !r.tool_use_id) continue;
      const c = this.call(r.tool_use_id);
      this._assign(c, typeof r.agent_id === 'string' ? r.agent_id : c.agent);
      c.server = true;
      if (typeof r.tool_name === 'string' && r.tool_name) c.tool = r.tool_name;
      if (typeof r.status === 'string' && r.status) c.status = r.status;
      const s = ms(r.started_at), e = ms(r.ended_at), d = num(r.duration_ms);
      if (Number.isFinite(s)) c.start = s;
      if (Number.isFinite(e)) c.end = e;
      if (Number.isFinite(d)) c.dur = d;
      if (!Number.isFinite(c.start) && Number.isFinite(c.end)) c.start = Number.isFinite(d) ? c.end - d : c.end;
      if (r.decision && typeof r.decision === 'object' && !Array.isArray(r.decision)) c.decision = r.decision;
      else if (typeof r.decision === 'string' && r.decision) c.decision = { action: r.decision };
      if (typeof r.error === 'string' && r.error) c.error = r.error;
      if (typeof r.parent_tool_use_id === 'string') c.parentCall = r.parent_tool_use_id;
      if (typeof r.prompt_id === 'string' && r.prompt_id) c.promptId = r.prompt_id;
      if (c.input === undefined) c.input = r.input !== undefined ? r.input : r.tool_input;
      if (typeof r.spawned_agent_id === 'string' && r.spawned_agent_id) c.spawned = r.spawned_agent_id;
      if (typeof r.family === 'string' && r.family) c.serverFamily = r.family;
      this._family(c);
      if (Number.isFinite(c.start) && c.start < this.t0) this.t0 = c.start;
      if (Number.isFinite(c.end) && c.end > this.t1) this.t1 = c.end;
    }
    this.version++;
  }

  /** span returns the session's [start, end] in ms; an empty model spans the last minute. */
  span() {
    if (!Number.isFinite(this.t0)) {
      const now = Date.now();
      return [now - 60000, now];
    }
    return [this.t0, Math.max(this.t1, this.t0 + 1)];
  }

  /**
   * layout returns the agent tree in display order (depth-first, children by
   * start), each agent with its calls sorted by start and packed into
   * sub-rows so parallel calls of one agent do not hide each other.
   */
  layout() {
    this.settle();
    if (this._layout && this._layout.version === this.version) return this._layout;
    const agents = [...this.agents.values()];
    const children = new Map(agents.map((a) => [a.id, []]));
    const parentOf = (a) => {
      if (a.id === MAIN) return null;
      if (typeof a.parent === 'string' && this.agents.has(a.parent) && a.parent !== a.id) return a.parent;
      if (a.spawn && this.calls.has(a.spawn)) {
        const p = this.calls.get(a.spawn).agent;
        if (p !== a.id && this.agents.has(p)) return p;
      }
      return MAIN;
    };
    const parent = new Map();
    for (const a of agents) parent.set(a.id, parentOf(a));
    // Break cycles: an agent whose ancestry returns to itself hangs off main.
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
    const visit = (a, depth) => {
      a.depth = depth;
      a.parentId = parent.get(a.id);
      a.children = children.get(a.id);
      order.push(a);
      for (const c of a.children) visit(c, depth + 1);
    };
    visit(this.agents.get(MAIN), 0);
    // Agents unreachable from main cannot exist after the cycle breaking,
    // but stay safe: show them at the end.
    if (order.length < agents.length) {
      const seen = new Set(order.map((a) => a.id));
      for (const a of agents) if (!seen.has(a.id)) visit(a, 1);
    }
    const MAX_ROWS = 4;
    for (const a of order) {
      a.calls.sort((x, y) => (x.start - y.start) || (x.id < y.id ? -1 : 1));
      const rowEnd = [];
      let maxDur = 0;
      a.failures = 0;
      a.denials = 0;
      for (const c of a.calls) {
        const s = c.start, e = endOf(c, this.t1);
        let row = rowEnd.findIndex((end) => end <= s);
        if (row < 0) {
          if (rowEnd.length < MAX_ROWS) { row = rowEnd.length; rowEnd.push(e); } else {
            row = rowEnd.indexOf(Math.min(...rowEnd));
          }
        }
        rowEnd[row] = Math.max(rowEnd[row] ?? -Infinity, e);
        c.row = row;
        maxDur = Math.max(maxDur, e - s);
        if (isFailure(c.status)) a.failures++;
        if (c.status === 'denied') a.denials++;
      }
      a.rows = Math.max(1, rowEnd.length);
      a.maxDur = maxDur;
    }
    this.markers.sort((x, y) => x.t - y.t);
    this._layout = { version: this.version, order };
    return this._layout;
  }

  /** stats returns per-agent and per-tool counts, failure rates and duration quantiles. */
  stats() {
    if (this._stats && this._stats.version === this.version) return this._stats;
    const group = () => ({ count: 0, failures: 0, denials: 0, durs: [] });
    const byAgent = new Map(), byTool = new Map();
    for (const c of this.calls.values()) {
      for (const [m, k] of [[byAgent, c.agent], [byTool, c.tool || '(unknown)']]) {
        let g = m.get(k);
        if (!g) { g = group(); m.set(k, g); }
        g.count++;
        if (isFailure(c.status)) g.failures++;
        if (c.status === 'denied') g.denials++;
        const d = durationOf(c);
        if (Number.isFinite(d) && c.pre && c.post) g.durs.push(d);
        else if (Number.isFinite(d) && c.server && c.status !== 'denied' && c.status !== 'pending' && c.status !== 'rejected') g.durs.push(d);
      }
    }
    const finish = (m) => [...m.entries()].map(([key, g]) => {
      g.durs.sort((a, b) => a - b);
      return { key, count: g.count, failures: g.failures, denials: g.denials, rate: g.count ? g.failures / g.count : 0, p50: quantile(g.durs, 0.5), p95: quantile(g.durs, 0.95) };
    }).sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1));
    this._stats = { version: this.version, agents: finish(byAgent), tools: finish(byTool) };
    return this._stats;
  }

  /** toolNames returns the distinct tool names, sorted. */
  toolNames() {
    return [...new Set([...this.calls.values()].map((c) => c.tool).filter(Boolean))].sort();
  }

  /** eventNames returns the distinct event names, sorted. */
  eventNames() {
    return [...new Set(this.events.map((e) => e.event || (e.kind === 'statusline' ? 'StatusLine' : '')).filter(Boolean))].sort();
  }

  /** eventStatus is the status of the call an event belongs to, '' for other events. */
  eventStatus(ev) {
    const id = ev.tool_use_id;
    if (typeof id === 'string' && id) return this.calls.get(id)?.status || '';
    return '';
  }
}

/** endOf returns a call's end, or until (the session's last event) while it runs. */
export function endOf(c, until) {
  if (Number.isFinite(c.end)) return Math.max(c.end, c.start);
  if (c.status === 'pending') return Math.max(until, c.start);
  return c.start;
}

/** durationOf returns a call's duration in ms: the client's own duration_ms when it sent one. */
export function durationOf(c) {
  if (Number.isFinite(c.dur)) return c.dur;
  if (Number.isFinite(c.end) && Number.isFinite(c.start)) return c.end - c.start;
  return NaN;
}

/**
 * Filters select what the session view shows. Empty fields select
 * everything: agent is an agent id ('' the main agent, null all), tool a tool
 * name, event a hook event name, status a call status.
 */
export function emptyFilters() {
  return { agent: null, tool: '', event: '', status: '' };
}

/** callMatches reports whether a call passes the filters. */
export function callMatches(c, f) {
  if (f.agent != null && c.agent !== f.agent) return false;
  if (f.tool && c.tool !== f.tool) return false;
  if (f.status && c.status !== f.status) return false;
  if (f.event && !isToolEvent(f.event)) return false;
  return true;
}

/** markerMatches reports whether a marker passes the filters. */
export function markerMatches(m, f) {
  if (f.agent != null && m.agent !== f.agent) return false;
  if (f.tool || f.status) return false;
  if (f.event && m.event !== f.event) return false;
  return true;
}

/** eventMatches reports whether an event passes the filters. */
export function eventMatches(ev, f, model) {
  if (f.agent != null && (ev.agent_id || '') !== f.agent) return false;
  if (f.tool && ev.tool_name !== f.tool) return false;
  if (f.event && (ev.event || (ev.kind === 'statusline' ? 'StatusLine' : '')) !== f.event) return false;
  if (f.status && model.eventStatus(ev) !== f.status) return false;
  return true;
}
