// Unit tests of the dashboard's pure modules (the session model, the
// output decoding, the stream parser and the formatting), in Node without a
// browser. Run by go test ./web (TestModel), which starts a real collector
// with the Claude Code 2.1.197 capture and passes its URL: the model is fed
// with what that collector answers, never with hand-made attribution.
//   HOOKWATCH_URL=… HW_REAL=… node --test model.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionModel, MAIN, FAILED, modelBehind, callMatches, callsTouching, emptyFilters, eventMatches, markerMatches, toolSummary, eventSummary, outputOf, contextPoints } from '../static/lib/model.js';
import { readable, outputView } from '../static/lib/output.js';
import { ms, fmtDur, fmtAge, fmtPct, fmtISO, fmtClock, quantile, projectOf, truncate, shortPath, plural } from '../static/lib/format.js';
import { sseParser, withQuery } from '../static/lib/api.js';
import { lineageOf, idleFor, IDLE_AFTER, mergeSessions } from '../static/views/sessions.js';

const BASE = process.env.HOOKWATCH_URL;
const REAL = process.env.HW_REAL;
const RESUMED = process.env.HW_RESUMED;
const FORK = process.env.HW_FORK;
const CODEX = process.env.HW_CODEX;
const needAPI = !(BASE && REAL) && 'needs the collector of go test ./web (HOOKWATCH_URL, HW_REAL)';

async function get(path) {
  const res = await fetch(BASE + path);
  assert.equal(res.status, 200, path);
  return res.json();
}

/** load returns what the dashboard loads of a session: its view, agents, calls (every page) and events. */
async function load(id) {
  const p = `/v1/sessions/${encodeURIComponent(id)}`;
  const all = async (path, key) => {
    const out = [];
    let cursor = '';
    for (;;) {
      const body = await get(`${path}?limit=5${cursor ? '&cursor=' + encodeURIComponent(cursor) : ''}`);
      out.push(body);
      cursor = body.next_cursor || '';
      if (!cursor) return out;
    }
  };
  const agents = await all(p + '/agents', 'agents');
  return { session: await get(p), agents: { agents: agents.flatMap((b) => b.agents), derived_seq: agents[0].derived_seq }, calls: await all(p + '/tool-calls', 'tool_calls'), events: (await all(p + '/events', 'events')).flatMap((b) => b.events) };
}

function build(api, id = REAL) {
  const m = new SessionModel(id);
  m.setSession(api.session);
  m.upsertAgents(api.agents.agents, api.agents.derived_seq);
  for (const page of api.calls) m.upsertCalls(page.tool_calls, page.derived_seq);
  for (const ev of api.events) m.addEvent(ev);
  return m;
}

test('the model shows the collector\'s agents and calls of the real capture', { skip: needAPI }, async () => {
  const api = await load(REAL);
  const m = build(api);
  const calls = api.calls.flatMap((b) => b.tool_calls);
  assert.ok(api.calls.length > 1, 'the calls came in several pages');
  const order = m.layout().order;
  // The tree is the collector's: each agent under its parent_agent_id, main first.
  assert.deepEqual(order.map((a) => a.id), ['', ...api.agents.agents.filter((a) => a.agent_id).sort((x, y) => Date.parse(x.started_at) - Date.parse(y.started_at) || (x.agent_id < y.agent_id ? -1 : 1)).map((a) => a.agent_id)]);
  for (const a of order) {
    const want = api.agents.agents.find((x) => x.agent_id === a.id);
    assert.equal(a.level, want.depth, `depth of "${a.id}"`);
    assert.equal(a.type, a.id ? want.agent_type : 'main');
    assert.equal(a.toolCount, want.tool_count);
    assert.deepEqual(a.calls.map((c) => c.id).sort(), calls.filter((c) => c.agent_id === a.id).map((c) => c.tool_use_id).sort(), `calls of "${a.id}"`);
  }
  assert.ok(order.some((a) => a.id && a.type === ''), 'the compaction agent keeps its empty type');
  // Statuses, families and durations are the collector's, as given.
  for (const c of calls) {
    const got = m.calls.get(c.tool_use_id);
    assert.deepEqual([got.status, got.family, got.tool, Number.isFinite(got.dur) ? got.dur : null], [c.status, c.family, c.tool_name, c.duration_ms], c.tool_use_id);
  }
  // Markers and the raw events of a call come from the events.
  const kinds = new Set(m.markers.map((k) => k.kind));
  for (const k of ['prompt', 'stop', 'compact', 'start', 'end']) assert.ok(kinds.has(k), k);
  assert.deepEqual(m.eventsOf('toolu_00000009').map((e) => e.event), ['PreToolUse', 'PostToolUseFailure', 'PostToolBatch']);
  // Output: from the PostToolUse, or from the call's entry in a PostToolBatch.
  const rejected = calls.find((c) => c.status === 'rejected');
  assert.match(outputOf(m, rejected.tool_use_id).value, /<tool_use_error>/);
  const ok = calls.find((c) => c.status === 'ok' && c.tool_name === 'Bash');
  if (ok) assert.equal(outputOf(m, ok.tool_use_id).found, true);
  // Turns by prompt_id, with the collector's calls.
  const tidy = m.turns().find((t) => t.prompt === 'tidy the project');
  assert.ok(tidy && tidy.calls.length > 0);
  assert.equal(tidy.calls.length, calls.filter((c) => c.prompt_id === tidy.id).length);
  // The tables' counts are the collector's: the session's tools, each
  // agent's own calls; the calls it says failed are those it counts.
  const nums = m.numbers();
  assert.ok(api.session.tools.length > 1, 'the collector lists the session\'s tools');
  assert.deepEqual(nums.tools.map((r) => [r.key, r.count, r.failures, r.denials, r.rejected]),
    api.session.tools.map((t) => [t.tool_name, t.calls, t.failures, t.denials, t.rejected]));
  const bash = nums.tools.find((r) => r.key === 'Bash');
  const bashCalls = calls.filter((c) => c.tool_name === 'Bash');
  assert.deepEqual([bash.count, bash.failures], [bashCalls.length, bashCalls.filter((c) => c.failed === true).length]);
  assert.ok(bash.failures > 0 && bash.rate === bash.failures / bash.count, 'the capture\'s failed Bash call');
  const durs = bashCalls.map((c) => c.duration_ms).filter(Number.isFinite).sort((a, b) => a - b);
  assert.equal(bash.p50, quantile(durs, 0.5));
  assert.deepEqual(nums.agents.map((r) => [r.key, r.count, r.failures, r.rejected]).sort(),
    api.agents.agents.filter((a) => a.tool_count > 0).map((a) => [a.agent_id, a.tool_count, a.failures, a.rejected]).sort());
  assert.equal([...m.calls.values()].filter((c) => c.failed).length, api.session.counts.failures);
});

test('2.1.332: background subagents, task notifications and the context a resume began with', { skip: !(BASE && RESUMED) && 'needs HW_RESUMED' }, async () => {
  const api = await load(RESUMED);
  const m = build(api, RESUMED);
  // The context curve's points: one per resume, in time order, as the
  // collector's model gives them, with no status line in the session.
  assert.equal(m.snaps.length, 0);
  const runs = api.session.runs.filter((r) => r.resume);
  assert.deepEqual(contextPoints(m).map((p) => [p.t, p.tokens]), runs.map((r) => [Date.parse(r.resume.at), r.resume.context_tokens]));
  // Background agents keep the collector's marks.
  const bg = api.agents.agents.filter((a) => a.background);
  assert.equal(bg.length, 4);
  for (const a of bg) {
    const got = m.agents.get(a.agent_id);
    assert.deepEqual([got.background, got.notifiedAt, got.notificationStatus], [true, Date.parse(a.notified_at), a.notification_status]);
  }
  // The client's task notifications draw no prompt marker: only the user's prompts do.
  const prompts = m.markers.filter((k) => k.kind === 'prompt');
  assert.equal(prompts.length, api.session.counts.prompts);
  assert.ok(prompts.every((k) => !k.label.includes('<task-notification>')));
  // Turns: those the client began with a notification are marked and take
  // no prompt from it; the user's prompts title the others.
  const turns = m.turns();
  const notes = turns.filter((t) => t.notification);
  assert.equal(notes.length, api.session.counts.task_notifications);
  assert.ok(notes.length > 0 && notes.every((t) => t.prompt === ''));
  assert.equal(turns.filter((t) => t.prompt).length, api.session.counts.prompts);
  // The user's prompts are numbered 1…n in turn order, as the collector
  // counts them: not the notifications' turns, nor the turn of a /compact,
  // which submits no prompt. The Turns tab and the usage per turn read
  // these numbers.
  const numbers = m.turnNumbers();
  assert.deepEqual([...numbers.values()], Array.from({ length: api.session.counts.prompts }, (_, i) => i + 1));
  assert.deepEqual([...numbers.keys()], turns.filter((t) => t.prompt).map((t) => t.id));
  assert.ok(turns.some((t) => t.compaction && !numbers.has(t.id)), 'the /compact turn is marked and not numbered');
});

test('calls carry their meaning: subtype and effect filters, the files a command touched beside Read calls', { skip: needAPI || (!RESUMED && 'needs HW_RESUMED') }, async () => {
  const api = await load(REAL);
  const m = build(api);
  const calls = [...m.calls.values()];
  assert.ok(calls.length > 0 && calls.every((c) => c.subtype && c.effect), 'every call of the capture is classified');
  // The collector filters on the same columns: its answer equals the model's filter.
  for (const [k, v] of [['subtype', 'modify_file'], ['effect', 'write'], ['subtype', 'read_file']]) {
    const body = await get(`/v1/sessions/${encodeURIComponent(REAL)}/tool-calls?${k}=${v}&limit=1000`);
    const want = body.tool_calls.map((c) => c.tool_use_id).sort();
    const got = calls.filter((c) => callMatches(c, { ...emptyFilters(), [k]: v })).map((c) => c.id).sort();
    assert.ok(want.length > 0, `some calls are ${k}=${v}`);
    assert.deepEqual(got, want, `${k}=${v}`);
  }
  // 2.1.332: echo hello > notes.txt wrote the file subagents then read:
  // the Reads are listed beside the command.
  const m2 = build(await load(RESUMED));
  const bash = [...m2.calls.values()].find((c) => c.tool === 'Bash' && c.filesWritten.some((f) => f.endsWith('/notes.txt')));
  assert.ok(bash, 'the Bash call that wrote notes.txt');
  assert.equal(bash.command.steps[0].program, 'echo');
  const path = bash.filesWritten.find((f) => f.endsWith('/notes.txt'));
  const readers = callsTouching(m2, path, bash.id);
  assert.ok(readers.some((c) => c.tool === 'Read'), 'the Read of notes.txt is beside the command');
});

test('the session list reads lineage as the collector states it: a fork, resumes, compactions', { skip: needAPI || (!RESUMED && 'needs HW_RESUMED') }, async () => {
  const kinds = (l) => l.map((x) => x.kind + (x.from ? ' ' + x.from : '') + (x.n ? ' ×' + x.n : ''));
  const real = await get('/v1/sessions/' + encodeURIComponent(REAL));
  const fork = real.child_session_ids[0];
  assert.ok(fork, 'the 2.1.197 capture has a fork');
  assert.deepEqual(kinds(lineageOf(await get('/v1/sessions/' + encodeURIComponent(fork)))).slice(0, 1), ['forked ' + REAL]);
  const r = kinds(lineageOf(await get('/v1/sessions/' + encodeURIComponent(RESUMED))));
  assert.ok(r.some((k) => k.startsWith('resumed ×')) && r.some((k) => k.startsWith('compacted ×')), `the 2.1.332 session, resumed and compacted, reads ${r}`);
  // The 2.1.332 fork names no parent the collector saw: a fork all the same.
  if (FORK) {
    const f = await get('/v1/sessions/' + encodeURIComponent(FORK));
    assert.deepEqual([f.lineage, f.parent_session_id], ['fork', '']);
    assert.deepEqual(lineageOf(f).map((x) => [x.kind, x.from, x.unknownParent]), [['forked', '', true]]);
  }
});

test('Codex: a subagent\'s events and calls, which carry no prompt id, are in the turn of the call that spawned it', { skip: !(BASE && CODEX) && 'needs HW_CODEX' }, async () => {
  const api = await load(CODEX);
  const m = build(api, CODEX);
  const calls = api.calls.flatMap((b) => b.tool_calls);
  const sub = api.agents.agents.find((a) => a.agent_id);
  const spawn = calls.find((c) => c.tool_use_id === sub.spawn_tool_use_id);
  assert.ok(spawn && spawn.prompt_id, 'the spawning call is in a turn of the user\'s');
  const own = calls.filter((c) => c.agent_id === sub.agent_id);
  assert.ok(own.length && own.every((c) => !c.prompt_id), 'the subagent\'s calls carry no prompt id');
  const subEvents = api.events.filter((e) => e.agent_id === sub.agent_id);
  assert.ok(subEvents.length && subEvents.every((e) => !e.prompt_id));
  assert.ok(subEvents.some((e) => e.event === 'UserPromptSubmit'), 'Codex submits the subagent\'s task as a prompt');
  const turns = m.turns();
  const t = turns.find((x) => x.id === spawn.prompt_id);
  assert.deepEqual(t.calls.map((c) => c.id).sort(), calls.map((c) => c.tool_use_id).sort(), 'every call in the one turn');
  for (const e of subEvents) assert.ok(t.seqs.includes(e.seq), `${e.event} of the subagent in the turn`);
  assert.ok(t.agents.has(sub.agent_id));
  // Codex names its subagent by a nickname, which the collector's model carries.
  assert.equal(sub.nickname, 'Godel');
  assert.equal(m.agents.get(sub.agent_id).nickname, 'Godel');
  assert.equal(m.agents.get(MAIN).nickname, '');
  // What is left without a prompt is the main agent's start and end.
  const rest = turns.find((x) => x.id === '');
  assert.deepEqual(rest ? rest.seqs.map((s) => m.bySeq.get(s).event) : [], ['SessionStart', 'SessionEnd']);
  // The subagent's task is no prompt of the user's: the turns are numbered as the collector counts prompts.
  assert.equal(m.turnNumbers(turns).size, api.session.counts.prompts);
  assert.equal(t.prompt, api.events.find((e) => e.event === 'UserPromptSubmit' && !e.agent_id).envelope.payload.prompt);
});

test('turns: a nested subagent without a prompt id joins the turn up its chain of spawns, and a spawn cycle ends', () => {
  const m = new SessionModel('s');
  const at = (s) => new Date(Date.UTC(2026, 0, 1, 12, 0, s)).toISOString();
  m.upsertAgents([
    { agent_id: '', depth: 0 },
    { agent_id: 'a1', parent_agent_id: '', spawn_tool_use_id: 'c1', depth: 1 },
    { agent_id: 'a2', parent_agent_id: 'a1', spawn_tool_use_id: 'c2', depth: 2 },
    { agent_id: 'x', parent_agent_id: 'y', spawn_tool_use_id: 'cy', depth: 1 },
    { agent_id: 'y', parent_agent_id: 'x', spawn_tool_use_id: 'cx', depth: 1 },
  ]);
  m.upsertCalls([
    { tool_use_id: 'c1', agent_id: '', status: 'ok', started_at: at(1), prompt_id: 'p1' },
    { tool_use_id: 'c2', agent_id: 'a1', status: 'ok', started_at: at(2) },
    { tool_use_id: 'c3', agent_id: 'a2', status: 'ok', started_at: at(3) },
    { tool_use_id: 'cx', agent_id: 'x', status: 'ok', started_at: at(4) },
    { tool_use_id: 'cy', agent_id: 'y', status: 'ok', started_at: at(5) },
  ]);
  const byId = new Map(m.turns().map((t) => [t.id, t.calls.map((c) => c.id).sort()]));
  assert.deepEqual(byId.get('p1'), ['c1', 'c2', 'c3']);
  assert.deepEqual(byId.get(''), ['cx', 'cy']);
});

test('the session list merges each page of the API in its place: the order of one sort, each session once', { skip: needAPI }, async () => {
  const keyed = (s) => ({ ...s, _last: ms(s.last_event_at) });
  const all = [];
  for (let cursor = ''; ;) {
    const page = await get('/v1/sessions?limit=3' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
    all.push(page.sessions.map(keyed));
    if (!(cursor = page.next_cursor)) break;
  }
  assert.ok(all.length > 2, 'several pages');
  const want = all.flat().sort((a, b) => (b._last - a._last) || (a.id < b.id ? 1 : -1)).map((s) => s.id);
  // Pages as they come, and pages in the reverse order (a read again after
  // the stream reconnected meets a list that holds them already).
  let list = [];
  for (const page of all) list = mergeSessions(list, page, false);
  assert.deepEqual(list.map((s) => s.id), want);
  let again = list;
  for (const page of [...all].reverse()) again = mergeSessions(again, page);
  assert.deepEqual(again.map((s) => s.id), want);
  // A live change of the oldest session makes it the latest, once.
  const oldest = list[list.length - 1];
  const moved = mergeSessions(list, [{ ...oldest, _last: list[0]._last + 1 }]);
  assert.deepEqual(moved.map((s) => s.id), [oldest.id, ...want.slice(0, -1)]);
  assert.equal(list.length, want.length, 'the list merged into is left as it was');
});

test('events are kept once, in seq order whatever the arrival order', { skip: needAPI }, async () => {
  const { events } = await load(REAL);
  const a = new SessionModel(REAL), b = new SessionModel(REAL);
  for (const ev of events) a.addEvent(ev);
  for (const ev of [...events].reverse()) b.addEvent(ev);
  for (const ev of events) assert.equal(a.addEvent(ev), false);
  assert.equal(b.addEvent({ ...events[0], seq: 1e9, session_id: 'another' }), false);
  b.settle();
  assert.deepEqual(b.events.map((e) => e.seq), a.events.map((e) => e.seq));
  assert.deepEqual(b.events.map((e) => e.seq), [...events.map((e) => e.seq)].sort((x, y) => x - y));
});

test('behind: the events past the derived_seq of the collector\'s latest session view', { skip: needAPI }, async () => {
  const api = await load(REAL);
  const m = build(api);
  assert.equal(api.session.derived_seq, api.session.last_seq, 'the capture is modelled');
  assert.equal(m.behind(), null);
  // The same view as a collector whose model had yet to take the last three events gives it.
  const seqs = api.events.map((e) => e.seq).sort((a, b) => a - b);
  m.applyModel({ session_id: REAL, session: { ...api.session, derived_seq: seqs[seqs.length - 4] } });
  assert.deepEqual(m.behind(), { events: 3 });
  // Not yet modelled at all, and before its events are loaded.
  const fresh = new SessionModel(REAL);
  fresh.setSession({ ...api.session, derived_seq: 0 });
  assert.deepEqual(fresh.behind(), { events: 0 });
  m.applyModel({ session_id: REAL, session: api.session });
  assert.equal(m.behind(), null, 'a later view that caught up');
  for (const s of [null, { id: REAL }, { id: REAL, derived_seq: '1', last_seq: 2 }]) {
    const x = new SessionModel(REAL);
    x.setSession(s);
    assert.equal(x.behind(), null, JSON.stringify(s));
    assert.equal(modelBehind(s), false, JSON.stringify(s));
  }
  // The session list reads the same of the views it lists.
  assert.equal(modelBehind(api.session), false);
  assert.equal(modelBehind({ ...api.session, derived_seq: seqs[seqs.length - 4] }), true);
  assert.equal(modelBehind({ ...api.session, derived_seq: 0 }), true);
  for (const v of [undefined, 'x', [], { derived_seq: 1 }, { last_seq: 2 }, { derived_seq: NaN, last_seq: 2 }, { derived_seq: 2, last_seq: '3' }]) assert.equal(modelBehind(v), false, JSON.stringify(v));
});

test('model messages upsert agents and calls, and a snapshot older than a change cannot undo it', () => {
  const m = new SessionModel('s');
  m.upsertAgents([{ agent_id: '', agent_type: null, parent_agent_id: null, depth: 0, started_at: '2026-01-01T12:00:00Z' }], 10);
  m.upsertCalls([{ tool_use_id: 't1', agent_id: '', tool_name: 'Bash', family: 'run_command', status: 'pending', started_at: '2026-01-01T12:00:01Z' }], 10);
  // A call of an agent the page has not heard of yet: it waits in a placeholder.
  assert.ok(m.applyModel({ session_id: 's', tool_calls: [{ tool_use_id: 't2', agent_id: 'a1', tool_name: 'Read', family: 'read_file', status: 'ok', started_at: '2026-01-01T12:00:02Z', duration_ms: 4 }] }, 12));
  assert.equal(m.agents.get('a1').placeholder, true);
  m.applyModel({ session_id: 's', session: { id: 's', status: 'running', counts: { tool_calls: 2 } },
    agents: [{ agent_id: 'a1', agent_type: 'Explore', parent_agent_id: '', spawn_tool_use_id: 't1', depth: 1, started_at: '2026-01-01T12:00:02Z', tool_count: 1, failures: 0 }],
    tool_calls: [{ tool_use_id: 't1', agent_id: '', tool_name: 'Bash', family: 'run_command', status: 'error', started_at: '2026-01-01T12:00:01Z', ended_at: '2026-01-01T12:00:03Z', duration_ms: 2000, error: 'exit 1' }] }, 13);
  assert.equal(m.session.counts.tool_calls, 2);
  m.setSession({ id: 's', status: 'running', counts: { tool_calls: 1 } }, 11);
  assert.equal(m.session.counts.tool_calls, 2, 'an older session view is ignored');
  const a1 = m.agents.get('a1');
  assert.equal(a1.placeholder, undefined);
  assert.deepEqual(a1.calls.map((c) => c.id), ['t2'], 'the placeholder\'s calls move to the agent');
  assert.deepEqual([m.calls.get('t1').status, m.calls.get('t1').dur, m.calls.get('t1').error], ['error', 2000, 'exit 1']);
  // A snapshot page read before seq 13 arrives late: it does not undo the change.
  m.upsertCalls([{ tool_use_id: 't1', agent_id: '', tool_name: 'Bash', status: 'pending', started_at: '2026-01-01T12:00:01Z' }], 11);
  assert.equal(m.calls.get('t1').status, 'error');
  // A call the collector moves to another agent leaves the first one's lane.
  m.applyModel({ tool_calls: [{ tool_use_id: 't2', agent_id: '', tool_name: 'Read', status: 'ok', started_at: '2026-01-01T12:00:02Z' }] }, 14);
  assert.deepEqual(m.agents.get('a1').calls, []);
  assert.deepEqual(m.layout().order.find((a) => a.id === '').calls.map((c) => c.id), ['t1', 't2']);
  assert.equal(m.layout().order.find((a) => a.id === 'a1').level, 1);
  // Another session's message is not applied.
  assert.equal(m.applyModel({ session_id: 'other', tool_calls: [{ tool_use_id: 'x', status: 'ok' }] }, 15), false);
  assert.equal(m.calls.has('x'), false);
});

test('a copy draws no marker of its own but in the raw view: one prompt, one end', () => {
  const m = new SessionModel('s');
  const at = (s) => new Date(Date.UTC(2026, 0, 1, 12, 0, s)).toISOString();
  const ev = (seq, kind, event, copy, payload) => ({ seq, session_id: 's', kind, event, time: at(seq), copy, envelope: { payload: { hook_event_name: event, ...payload } } });
  m.addEvent(ev(1, 'hook', 'UserPromptSubmit', false, { prompt: 'go' }));
  m.addEvent(ev(2, 'rollout', 'UserPromptSubmit', true, { prompt: 'go' }));
  m.addEvent(ev(3, 'hook', 'SessionEnd', false, { reason: 'other' }));
  m.addEvent(ev(4, 'rollout', 'SessionEnd', true, { reason: 'other' }));
  const shown = (raw) => m.markers.filter((k) => markerMatches(k, { ...emptyFilters(), raw })).map((k) => [k.kind, k.seq]);
  assert.deepEqual(shown(false), [['prompt', 1], ['end', 3]]);
  assert.deepEqual(shown(true), [['prompt', 1], ['prompt', 2], ['end', 3], ['end', 4]]);
});

test('a streamed copy marks the hook\'s event it copies, before or after the listing brings it', () => {
  const m = new SessionModel('s');
  const hook = (seq, also) => ({ seq, session_id: 's', kind: 'hook', event: 'PreToolUse', tool_use_id: 't' + seq, time: '2026-01-01T12:00:00Z', ...(also ? { also_read_from: also } : {}) });
  const copy = (seq, of) => ({ seq, session_id: 's', kind: 'transcript', event: 'PreToolUse', copy: true, time: '2026-01-01T12:00:01Z',
    copy_of: [{ seq: of, also_read_from: ['transcript'] }] });
  m.addEvent(hook(1));
  const v = m.version;
  m.addEvent(copy(3, 1));
  assert.equal(m.applyCopyOf(copy(3, 1)), true, 'the hook\'s event shown changed');
  assert.deepEqual(m.bySeq.get(1).also_read_from, ['transcript']);
  assert.ok(m.version > v);
  assert.equal(m.applyCopyOf(copy(3, 1)), false, 'told again, nothing changes');
  // The copy arrives before a listing read earlier brings the hook's event unmarked.
  assert.equal(m.applyCopyOf(copy(4, 2)), false, 'nothing shown yet');
  m.addEvent(hook(2));
  assert.deepEqual(m.bySeq.get(2).also_read_from, ['transcript']);
  // Hostile copy_of entries are ignored.
  assert.equal(m.applyCopyOf({ copy_of: [null, 7, { seq: 'x' }, { seq: 1, also_read_from: 'transcript' }] }), false);
});

test('parallel calls of one agent get their own rows', () => {
  const m = new SessionModel('s');
  const at = (s) => new Date(Date.UTC(2026, 0, 1, 12, 0, s)).toISOString();
  m.upsertCalls([
    { tool_use_id: 'a', agent_id: '', status: 'ok', started_at: at(0), ended_at: at(10) },
    { tool_use_id: 'b', agent_id: '', status: 'ok', started_at: at(1), ended_at: at(2) },
    { tool_use_id: 'c', agent_id: '', status: 'ok', started_at: at(3), ended_at: at(4) },
    { tool_use_id: 'd', agent_id: '', status: 'ok', started_at: at(11), ended_at: at(12) },
  ]);
  const main = m.layout().order[0];
  assert.deepEqual(main.calls.map((c) => [c.id, c.row]), [['a', 0], ['b', 1], ['c', 1], ['d', 0]]);
  assert.equal(main.rows, 2);
});

test('calls beyond the rows of a lane are counted where they stack, and every row shows when asked', () => {
  const m = new SessionModel('s');
  const at = (ms) => new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + ms).toISOString();
  // A fan-out of 50 spawning calls at once, and a lone call after them.
  const fan = Array.from({ length: 50 }, (_, i) => ({ tool_use_id: 'f' + String(i).padStart(2, '0'), agent_id: '', status: 'ok', started_at: at(i), ended_at: at(60000 + i) }));
  m.upsertCalls([...fan, { tool_use_id: 'z', agent_id: '', status: 'ok', started_at: at(120000), ended_at: at(121000) }]);
  let main = m.layout().order[0];
  assert.equal(main.rows, 4);
  assert.equal(main.stacked, 46);
  assert.deepEqual(main.overflow.map((o) => [o.n, o.start]), [[46, Date.parse(at(4))]]);
  assert.equal(main.calls.filter((c) => c.stacked).length, 46);
  m.toggleRows('');
  main = m.layout().order[0];
  assert.equal(main.rows, 50);
  assert.equal(main.stacked, 0);
  assert.equal(new Set(main.calls.filter((c) => c.id !== 'z').map((c) => c.row)).size, 50, 'a row per call');
  m.toggleRows('');
  assert.equal(m.layout().order[0].rows, 4);
});

test('hostile and malformed answers never throw, and a parent cycle cannot hang the tree', () => {
  const m = new SessionModel('s');
  const junk = [null, 1, 'x', [], {}, { agent_id: 5 }, { agent_id: 'x', parent_agent_id: 'x', depth: 'deep', started_at: {} },
    { agent_id: 'p', parent_agent_id: 'q' }, { agent_id: 'q', parent_agent_id: 'p' }, { agent_id: '__proto__', agent_type: { a: 1 } }];
  m.upsertAgents(junk, 1);
  m.upsertAgents('not a list');
  m.upsertCalls([null, {}, { tool_use_id: '' }, { tool_use_id: 't', status: 5, started_at: 'nope', agent_id: 7, decision: 'deny' },
    { tool_use_id: 'constructor', agent_id: 'toString', duration_ms: '5', input: '<script>' }], 1);
  m.applyModel(null);
  m.applyModel({ session: 'x', agents: {}, tool_calls: 5 });
  for (const ev of [null, 1, { seq: 'x' }, { seq: 1 }, { seq: 2, session_id: 's', envelope: null },
    { seq: 3, session_id: 's', event: 'PostToolBatch', envelope: { payload: { tool_calls: [null, 1, { tool_use_id: {} }, { tool_use_id: 'b', tool_response: 7 }] } } },
    { seq: 4, session_id: 's', kind: 'statusline', envelope: { payload: { context_window: 'x', cost: [1] } } },
    { seq: 5, session_id: 's', event: '__proto__', agent_id: '__proto__', tool_use_id: 'constructor', prompt_id: 'constructor', envelope: { payload: { hook_event_name: 'toString' } } }]) m.addEvent(ev);
  const order = m.layout().order;
  assert.equal(order.length, m.agents.size, 'every agent drawn once');
  assert.equal(m.calls.get('t').decision.action, 'deny');
  m.numbers();
  m.turns();
  outputOf(m, 'b');
  for (const ev of m.events) {
    eventSummary(ev);
    eventMatches(ev, { agent: 'x', tool: 'y', event: 'z', status: 'ok' }, m);
  }
});

test('filters', () => {
  const c = { agent: 'a', tool: 'Read', status: 'ok' };
  const f = (over, want) => assert.equal(callMatches(c, { ...emptyFilters(), ...over }), want, JSON.stringify(over));
  f({}, true);
  f({ agent: MAIN }, false);
  f({ agent: 'a' }, true);
  f({ tool: 'Read' }, true);
  f({ tool: 'Bash' }, false);
  f({ status: 'error' }, false);
  f({ event: 'PreToolUse' }, true);
  f({ event: 'UserPromptSubmit' }, false);
  f({ status: FAILED }, false);
  // Failed selects the calls the collector says failed, whatever their
  // status (an error or an interruption).
  const cut = { ...c, status: 'interrupted', failed: true };
  assert.equal(callMatches(cut, { ...emptyFilters(), status: FAILED }), true);
  assert.equal(callMatches(cut, { ...emptyFilters(), status: 'error' }), false);
  assert.equal(callMatches(cut, { ...emptyFilters(), status: 'interrupted' }), true);
});

test('tool output is shown decoded: strings, and previews cut at both ends', () => {
  const out = { stdout: 'line 1\nline "2"\ttab', stderr: '', interrupted: false, sizes: [1, 2] };
  const text = JSON.stringify(out);
  const f = (got, want) => assert.equal(got, want);
  f(readable(text), 'stdout:\n  line 1\n  line "2"\ttab\nstderr:\ninterrupted: false\nsizes:\n  1\n  2');
  // The whole output fitted in the preview.
  f(outputView({ hookwatch_capture: 'preview', bytes: text.length, head: text }).text, readable(text));
  // A string output is the string.
  f(outputView({ hookwatch_capture: 'preview', bytes: 9, head: '"a\\nb\\u00e9"' }).text, 'a\nbé');
  f(outputView('plain\ntext').text, 'plain\ntext');
  // Cut in the middle, and inside an escape: nothing escaped is left.
  const big = JSON.stringify({ stdout: 'AKIA line\n'.repeat(100) + 'end of output', code: 0 });
  const v = outputView({ hookwatch_capture: 'preview', bytes: big.length, head: big.slice(0, 41), tail: big.slice(-30) });
  assert.doesNotMatch(v.text, /\\n|\\"/, v.text);
  assert.match(v.text, /^stdout:\n {2}AKIA line\n {2}AKIA line\n/);
  assert.match(v.text, /bytes not kept …\n[\s\S]*end of output\ncode: 0$/);
  assert.equal(v.note, `Preview: the first and last bytes of ${big.length.toLocaleString('en')} bytes.`);
  f(outputView({ hookwatch_capture: 'none', bytes: 12 }).note, 'Output not captured (12 bytes; see HOOKWATCH_CAPTURE).');
  assert.deepEqual(outputView({ a: 1 }), { json: { a: 1 } });
  // Hostile text never throws.
  for (const s of ['', '"', '\\', '{{{{', ']]]', '"\\u12', '{"a":', 'null', '\u0000']) { readable(s); readable(s, true); }
});

test('formatting', () => {
  const f = (got, want) => assert.equal(got, want);
  f(fmtDur(0.5), '<1 ms');
  f(fmtDur(38), '38 ms');
  f(fmtDur(3210), '3.2 s');
  f(fmtDur(65000), '1m 05s');
  f(fmtAge(45e3), '45s');
  f(fmtAge(12 * 60e3 + 5e3), '12m');
  f(fmtAge(49 * 86400e3 + 3600e3), '49d');
  // Idle: running (or background) and silent for IDLE_AFTER; the status is not changed.
  const now = Date.parse('2026-03-01T00:00:00Z');
  const at = (ago) => new Date(now - ago).toISOString();
  f(idleFor({ status: 'running', last_event_at: at(IDLE_AFTER - 1) }, now), 0);
  f(idleFor({ status: 'running', last_event_at: at(IDLE_AFTER) }, now), IDLE_AFTER);
  f(idleFor({ status: 'background', last_event_at: at(2 * IDLE_AFTER) }, now), 2 * IDLE_AFTER);
  f(idleFor({ status: 'ended', last_event_at: at(2 * IDLE_AFTER) }, now), 0);
  f(idleFor({ status: 'running' }, now), 0);
  f(fmtDur(2 * 3600e3 + 3 * 60e3), '2h 03m');
  f(fmtDur(NaN), '–');
  f(fmtDur(-1), '–');
  f(fmtPct(0.5), '50%');
  f(fmtPct(0.0004), '<0.1%');
  f(quantile([1, 2, 3, 4], 0.5), 2);
  f(quantile([1, 2, 3, 4], 0.95), 4);
  f(Number.isNaN(quantile([], 0.5)), true);
  f(plural(1, 'call'), '1 call');
  f(plural(0, 'call'), '0 calls');
  f(plural(1024, 'event'), '1,024 events');
  f(plural(2, 'agent'), '2 agents');
  f(projectOf({ project: '-home-dev-src-pay-api', project_name: 'pay-api' }), 'pay-api');
  f(projectOf({ project: 'p' }), 'p');
  f(projectOf({}), '');
  f(truncate('abcdef', 4), 'abc…');
  f(shortPath('/home/dev/src/demo'), '/home/dev/src/demo');
  f(shortPath('/tmp/TestImportRun1234567890/001/home/dev/src/demo', 24), '/tmp/TestI…/dev/src/demo');
  f(shortPath('/tmp/TestImportRun1234567890/001/home/dev/src/demo', 24).length, 24);
  f(shortPath('C:\\Users\\dev\\AppData\\Local\\Temp\\build\\demo', 24), 'C:\\User…\\Temp\\build\\demo');
  f(shortPath('/' + 'x'.repeat(60), 10), '/xx…xxxxxx');
  f(toolSummary({ command: 'ls' }), 'ls');
  f(toolSummary({ file_path: '/a' }), '/a');
  f(toolSummary(null), '');
});

test('the event-stream parser, whatever the chunking', () => {
  const text = 'retry: 2000\r\n: connected\r\n\r\nid: 7:3\r\ndata: {"a":1}\r\n\r\nevent: model\nid: 7:4\ndata: {"m":1}\n\nid: 8\ndata:first\ndata: second\n\n: ping\n\nid: 9\n\nid: bad\0id\ndata: x\n\n';
  const want = [['{"a":1}', '7:3', ''], ['{"m":1}', '7:4', 'model'], ['first\nsecond', '8', ''], ['', '9', ''], ['x', '9', '']];
  // Every split point, including inside each CRLF.
  for (let cut = 0; cut <= text.length; cut++) {
    const got = [];
    let retry = 0;
    const push = sseParser({ onEvent: (d, id, type) => got.push([d, id, type]), onRetry: (ms) => { retry = ms; } });
    push(text.slice(0, cut));
    push(text.slice(cut));
    assert.deepEqual(got, want, 'split at ' + cut);
    assert.equal(retry, 2000);
  }
  // One character at a time.
  const got = [];
  const push = sseParser({ onEvent: (d, id, type) => got.push([d, id, type]) });
  for (const c of text) push(c);
  assert.deepEqual(got, want);
});

test('query strings', () => {
  assert.equal(withQuery('/v1/x', { limit: 10, cursor: '', tool: 'a b' }), '/v1/x?limit=10&tool=a+b');
  assert.equal(withQuery('/v1/x', { agent_id: '' }), '/v1/x?agent_id=');
  assert.equal(withQuery('/v1/x?a=1', { b: 2 }), '/v1/x?a=1&b=2');
  assert.equal(withQuery('/v1/x', {}), '/v1/x');
});

test('fmtISO names the instant in the local time the clocks show, with its offset', () => {
  const tz = process.env.TZ;
  try {
    const t = Date.UTC(2026, 11, 3, 9, 35, 17, 413);
    for (const [zone, want] of [['UTC', '2026-12-03T09:35:17.413Z'], ['Asia/Kolkata', '2026-12-03T15:05:17.413+05:30'],
      ['America/St_Johns', '2026-12-03T06:05:17.413-03:30'], ['Pacific/Kiritimati', '2026-12-03T23:35:17.413+14:00']]) {
      process.env.TZ = zone;
      assert.equal(fmtISO(t), want, zone);
      assert.ok(fmtISO(t).includes(fmtClock(t, true)), `${zone}: the timeline's clock reads ${fmtClock(t, true)}`);
      assert.equal(Date.parse(fmtISO(t)), t, `${zone}: the same instant`);
    }
    assert.equal(fmtISO(NaN), '–');
  } finally {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  }
});
