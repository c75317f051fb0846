// Unit tests of the dashboard's pure modules (the session model and the
// formatting), in Node without a browser. Run by go test ./web (TestModel).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SessionModel, MAIN, callMatches, emptyFilters, eventMatches, toolSummary, eventSummary } from '../static/lib/model.js';
import { fmtDur, fmtPct, quantile, familyOf, projectOf, truncate } from '../static/lib/format.js';
import { sseParser, withQuery } from '../static/lib/api.js';

const SID = '0e2e0b5d-7136-4322-8086-c38ed16b10ad';

/** events turns the JSONL capture into stored events, one second apart. */
function capture() {
  const lines = readFileSync(new URL('../../testdata/payloads/claude-code-2.1.197.jsonl', import.meta.url), 'utf8').split('\n').filter(Boolean);
  return lines.map((l, i) => {
    const p = JSON.parse(l);
    return {
      seq: i + 1, id: 'e' + i, session_id: p.session_id, event: p.hook_event_name, agent_id: p.agent_id || '',
      agent_type: 'agent_type' in p ? p.agent_type : null, tool_name: p.tool_name, tool_use_id: p.tool_use_id, prompt_id: p.prompt_id,
      time: new Date(Date.UTC(2026, 0, 1, 12, 0, i)).toISOString(), kind: 'hook', envelope: { payload: p },
    };
  });
}

test('the model derives agents, calls and statuses from the real capture', () => {
  const m = new SessionModel(SID);
  for (const ev of capture()) m.add(ev);
  const order = m.layout().order;
  assert.deepEqual(order.map((a) => [a.id, a.type, a.depth]), [
    ['', 'main', 0],
    ['a43b7af849cd70f20', 'Explore', 1],
    ['a0b378cebfb773646', 'general-purpose', 1],
    ['a5ff9c41ec0e40b8a', '', 1], // the compaction agent keeps its empty type
  ]);
  // Each subagent is linked to the Agent call that spawned it (from the call's response).
  assert.equal(m.agents.get('a43b7af849cd70f20').spawn, 'toolu_00000013');
  assert.equal(m.agents.get('a0b378cebfb773646').spawn, 'toolu_00000014');
  const status = (id) => m.calls.get(id).status;
  assert.equal(status('toolu_00000009'), 'error'); // PostToolUseFailure
  assert.equal(status('toolu_00000002'), 'rejected'); // <tool_use_error> in PostToolBatch only
  assert.equal(status('toolu_00000005'), 'ok');
  assert.equal(m.calls.get('toolu_00000009').dur, 38);
  assert.equal(m.calls.get('toolu_00000016').agent, 'a43b7af849cd70f20');
  assert.equal(m.calls.size, 12);
  // Markers: prompts, stops, compaction.
  const kinds = new Set(m.markers.map((k) => k.kind));
  for (const k of ['prompt', 'stop', 'compact', 'start', 'end']) assert.ok(kinds.has(k), k);
  // Turns by prompt_id.
  assert.equal(m.turns.get('4e22d70a-9461-4c2b-b2e7-bfcde2ff451a').prompt, 'tidy the project');
  // Stats.
  const bash = m.stats().tools.find((r) => r.key === 'Bash');
  assert.deepEqual([bash.count, bash.failures, bash.rate], [2, 1, 0.5]);
});

test('events are applied once, in any order, and other sessions are ignored', () => {
  const evs = capture();
  const a = new SessionModel(SID), b = new SessionModel(SID);
  for (const ev of evs) a.add(ev);
  for (const ev of [...evs].reverse()) b.add(ev);
  for (const ev of evs) assert.equal(a.add(ev), false);
  b.settle();
  assert.deepEqual(b.events.map((e) => e.seq), a.events.map((e) => e.seq).filter((s) => evs[s - 1].session_id === SID));
  assert.equal(a.events.length, evs.filter((e) => e.session_id === SID).length);
  assert.deepEqual([...b.calls.keys()].sort(), [...a.calls.keys()].sort());
  for (const [id, c] of a.calls) assert.equal(b.calls.get(id).status, c.status, id);
});

test('the collector\'s attribution wins over what events say', () => {
  const m = new SessionModel(SID);
  for (const ev of capture()) m.add(ev);
  m.mergeAgents([{ agent_id: 'a43b7af849cd70f20', agent_type: 'Explore', parent_agent_id: 'a0b378cebfb773646', spawn_tool_use_id: 'toolu_00000014', depth: 2, description: 'scan' }]);
  m.mergeCalls([{ tool_use_id: 'toolu_00000005', agent_id: '', tool_name: 'Read', status: 'denied', family: 'custom_family', started_at: '2026-01-01T12:00:00Z', ended_at: null, duration_ms: null, decision: { action: 'deny', reason: 'no' } }]);
  const ex = m.layout().order.find((a) => a.id === 'a43b7af849cd70f20');
  assert.equal(ex.parentId, 'a0b378cebfb773646');
  assert.equal(ex.depth, 2);
  const c = m.calls.get('toolu_00000005');
  assert.deepEqual([c.status, c.family, c.decision.action], ['denied', 'custom_family', 'deny']);
  // A parent cycle cannot hang the tree.
  m.mergeAgents([{ agent_id: 'a0b378cebfb773646', parent_agent_id: 'a43b7af849cd70f20' }]);
  const order = m.layout().order;
  assert.equal(order.length, m.agents.size);
});

test('attribution merged before the events keeps every call in its agent', () => {
  // The collector answers /agents and /tool-calls before the event pages
  // arrive; an agent names its spawning call before that call is seen.
  const evs = capture();
  const a = new SessionModel(SID);
  for (const ev of evs) a.add(ev);
  const b = new SessionModel(SID);
  b.mergeAgents([...a.agents.values()].map((x) => ({ agent_id: x.id, agent_type: x.type, parent_agent_id: x.id ? '' : null, spawn_tool_use_id: x.spawn })));
  b.mergeCalls([...a.calls.values()].map((c) => ({ tool_use_id: c.id, agent_id: c.agent, tool_name: c.tool, status: c.status })));
  for (const ev of evs) b.add(ev);
  const calls = (m) => m.layout().order.map((x) => [x.id, x.calls.map((c) => c.id).sort()]);
  assert.deepEqual(calls(b), calls(a));
});

test('hostile and malformed events never throw', () => {
  const m = new SessionModel('s');
  const junk = [null, 1, 'x', [], {}, { seq: 'x' }, { seq: 1 }, { seq: 2, session_id: 's', envelope: null },
    { seq: 3, session_id: 's', event: 'PreToolUse', envelope: { payload: { tool_use_id: 5, tool_input: 'str' } } },
    { seq: 4, session_id: 's', event: 'PostToolBatch', envelope: { payload: { tool_calls: [null, 1, { tool_use_id: {} }, { tool_use_id: 'b', tool_response: 7 }] } } },
    { seq: 5, session_id: 's', event: 'PostToolUse', tool_use_id: 't', time: 'not a time', envelope: { payload: { tool_response: { agentId: 5 } } } },
    { seq: 6, session_id: 's', event: 'SubagentStart', agent_id: 'x', agent_type: { a: 1 }, envelope: { payload: {}, subagent: { toolUseId: 't' } } },
    { seq: 7, session_id: 's', kind: 'statusline', envelope: { payload: { context_window: 'x', cost: [1] } } },
    { seq: 8, session_id: 's', event: '__proto__', agent_id: '__proto__', prompt_id: 'constructor', envelope: { payload: { hook_event_name: 'toString' } } },
  ];
  for (const ev of junk) m.add(ev);
  m.mergeAgents([null, { agent_id: 5 }, { agent_id: 'x', parent_agent_id: 'x' }]);
  m.mergeCalls([null, {}, { tool_use_id: 't', status: 5, started_at: 'nope' }]);
  m.layout();
  m.stats();
  for (const ev of m.events) {
    eventSummary(ev, m);
    eventMatches(ev, { agent: 'x', tool: 'y', event: 'z', status: 'ok' }, m);
  }
  assert.ok(m.events.length >= 6);
});

test('random events never throw', () => {
  // A small deterministic fuzzer over the shapes events take.
  let s = 42;
  const rnd = (n) => { s = (s * 1103515245 + 12345) & 0x7fffffff; return s % n; };
  const pick = (xs) => xs[rnd(xs.length)];
  const values = [null, undefined, 0, -1, 1e308, NaN, '', 'x', '<script>', [], {}, [1, 'a'], { a: { b: {} } }, true];
  const names = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch', 'PermissionDenied', 'SubagentStart', 'SubagentStop', 'UserPromptSubmit', 'Stop', 'SessionStart', 'PreCompact', 'StatusLine', 'Notification', 'X'];
  const m = new SessionModel('s');
  for (let i = 1; i < 3000; i++) {
    const payload = {};
    for (const k of ['tool_use_id', 'tool_name', 'tool_input', 'tool_response', 'tool_calls', 'duration_ms', 'is_interrupt', 'error', 'prompt', 'source', 'agent_id', 'agent_type', 'context_window', 'cost']) {
      if (rnd(3) === 0) payload[k] = rnd(2) ? pick(values) : pick(['t1', 't2', 'a1', 'Agent', 'Bash']);
    }
    if (rnd(4) === 0) payload.tool_calls = [{ tool_use_id: pick(['t1', 't3', 5]), tool_response: pick(values) }];
    m.add({ seq: rnd(4000), session_id: 's', event: pick(names), agent_id: pick(['', 'a1', 'a2', 5]), agent_type: pick([null, '', 'Explore']),
      tool_use_id: pick([undefined, 't1', 't2', 't3']), time: pick([new Date(1e12 + i * 1000).toISOString(), 'x', null]), kind: pick(['hook', 'statusline']),
      envelope: { payload, decision: pick([null, { action: 'deny' }, 'x']) } });
    if (i % 500 === 0) { m.layout(); m.stats(); }
  }
  m.layout();
  assert.ok(m.calls.size > 0);
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
});

test('formatting', () => {
  const f = (got, want) => assert.equal(got, want);
  f(fmtDur(0.5), '<1 ms');
  f(fmtDur(38), '38 ms');
  f(fmtDur(3210), '3.2 s');
  f(fmtDur(65000), '1m 05s');
  f(fmtDur(2 * 3600e3 + 3 * 60e3), '2h 03m');
  f(fmtDur(NaN), '–');
  f(fmtDur(-1), '–');
  f(fmtPct(0.5), '50%');
  f(fmtPct(0.0004), '<0.1%');
  f(quantile([1, 2, 3, 4], 0.5), 2);
  f(quantile([1, 2, 3, 4], 0.95), 4);
  f(Number.isNaN(quantile([], 0.5)), true);
  f(familyOf('Read'), 'read_file');
  f(familyOf('Bash'), 'run_command');
  f(familyOf('mcp__github__get_issue'), 'mcp_call');
  f(familyOf('TodoWrite'), 'task');
  f(familyOf('toString'), 'other');
  f(familyOf('__proto__'), 'other');
  f(projectOf({ cwd: '/home/dev/src/demo/' }), 'demo');
  f(projectOf({ project: '-home-dev-src-pay-api', cwd: '/home/dev/src/pay-api' }), 'pay-api');
  f(projectOf({ project: 'p', cwd: '/x' }), 'p');
  f(projectOf({}), '');
  f(truncate('abcdef', 4), 'abc…');
  f(toolSummary({ command: 'ls' }), 'ls');
  f(toolSummary({ file_path: '/a' }), '/a');
  f(toolSummary(null), '');
});

test('the event-stream parser, whatever the chunking', () => {
  const text = 'retry: 2000\r\n: connected\r\n\r\nid: 7\r\ndata: {"a":1}\r\n\r\nid: 8\ndata:first\ndata: second\n\n: ping\n\nid: 9\n\nid: bad\0id\ndata: x\n\n';
  const want = [['{"a":1}', '7'], ['first\nsecond', '8'], ['', '9'], ['x', '9']];
  // Every split point, including inside each CRLF.
  for (let cut = 0; cut <= text.length; cut++) {
    const got = [];
    let retry = 0;
    const push = sseParser({ onEvent: (d, id) => got.push([d, id]), onRetry: (ms) => { retry = ms; } });
    push(text.slice(0, cut));
    push(text.slice(cut));
    assert.deepEqual(got, want, 'split at ' + cut);
    assert.equal(retry, 2000);
  }
  // One character at a time.
  const got = [];
  const push = sseParser({ onEvent: (d, id) => got.push([d, id]) });
  for (const c of text) push(c);
  assert.deepEqual(got, want);
});

test('query strings', () => {
  assert.equal(withQuery('/v1/x', { limit: 10, cursor: '', tool: 'a b' }), '/v1/x?limit=10&tool=a+b');
  assert.equal(withQuery('/v1/x', { agent_id: '' }), '/v1/x?agent_id=');
  assert.equal(withQuery('/v1/x?a=1', { b: 2 }), '/v1/x?a=1&b=2');
  assert.equal(withQuery('/v1/x', {}), '/v1/x');
});
