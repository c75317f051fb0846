// Browser tests of the dashboard in real headless Chromium, against a real
// collector that browser_test.go starts and fills. Run by `go test ./web`;
// by hand: HOOKWATCH_URL=… HW_REAL=… HW_XSS=… HW_PARALLEL=… HW_PREVIEW=… node --test dashboard.test.mjs
// (go test ./web -run 'TestBrowser$/collector' runs the tests whose names
// match HW_TEST_PATTERN, e.g. HW_TEST_PATTERN='^agent names stay', and
// passes HW_NODE_ARGS on to node).
//
// What the API says is the reference: the tests read it over HTTP and check
// that the page shows the same agents, calls and counts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch } from './browser.mjs';

const BASE = process.env.HOOKWATCH_URL;
const REAL = process.env.HW_REAL;
const XSS = process.env.HW_XSS;
const PARALLEL = process.env.HW_PARALLEL;
const PREVIEW = process.env.HW_PREVIEW;
const BACKGROUND = process.env.HW_BACKGROUND;
const STORY = process.env.HW_STORY;
const RESUMED = process.env.HW_RESUMED;
const FORK = process.env.HW_FORK;
const CODEX = process.env.HW_CODEX;
const OUTLIER = process.env.HW_OUTLIER;
const OUTLIER_AGENT = process.env.HW_OUTLIER_AGENT;
const STALLED = process.env.HW_STALLED;
const TRANSCRIPT = process.env.HW_TRANSCRIPT;
const TRANSCRIPT_LOST = process.env.HW_TRANSCRIPT_LOST;
const APIERROR = process.env.HW_APIERROR;
const APIERROR_FILE = process.env.HW_APIERROR_FILE;
const XSS_STRINGS = JSON.parse(process.env.HW_XSS_STRINGS || '[]');
const TOKEN = process.env.HW_TOKEN || '';
const auth = TOKEN ? { Authorization: 'Bearer ' + TOKEN } : {};
if (!BASE || !REAL || !XSS || !PARALLEL || !PREVIEW || !BACKGROUND || !STORY || !RESUMED || !OUTLIER || !OUTLIER_AGENT || !STALLED || !FORK || !CODEX || !TRANSCRIPT || !TRANSCRIPT_LOST || !APIERROR || !APIERROR_FILE) {
  throw new Error('set HOOKWATCH_URL, HW_REAL, HW_XSS, HW_PARALLEL, HW_PREVIEW, HW_BACKGROUND, HW_STORY, HW_RESUMED, HW_OUTLIER, HW_OUTLIER_AGENT, HW_STALLED, HW_FORK, HW_CODEX, HW_TRANSCRIPT, HW_TRANSCRIPT_LOST, HW_APIERROR and HW_APIERROR_FILE (go test ./web does)');
}

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function api(path) {
  const res = await fetch(BASE + path, { headers: auth });
  if (!res.ok) return { status: res.status, body: null };
  return { status: res.status, body: await res.json() };
}

async function all(path, key) {
  const out = [];
  let cursor = '';
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const { body } = await api(`${path}${sep}limit=1000${cursor ? '&cursor=' + encodeURIComponent(cursor) : ''}`);
    out.push(...(body?.[key] || []));
    cursor = body?.next_cursor || body?.next || '';
    if (!cursor) return out;
  }
}

async function post(envelopes) {
  const res = await fetch(BASE + '/v1/events', { method: 'POST', headers: { 'Content-Type': 'application/json', ...auth }, body: JSON.stringify({ envelopes }) });
  assert.equal(res.status, 200, 'POST /v1/events: ' + (await res.text()));
}

/** open returns a page that records everything a hostile payload could make happen. */
async function open(path) {
  const page = await browser.ctx.newPage();
  const seen = { errors: [], dialogs: [], console: [] };
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`));
  });
  page.on('pageerror', (e) => seen.errors.push(e.message));
  page.on('dialog', (d) => { seen.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('console', (m) => {
    // Before a token is given, the API answers 401.
    if (m.type() === 'error' && !/401 \(Unauthorized\)/.test(m.text())) seen.console.push(m.text());
  });
  await page.goto(BASE + path);
  return { page, seen };
}

async function loaded(page) {
  // The model and the events loaded, and drawn when the timeline is the tab shown.
  await page.waitForFunction(() => window.__hw && window.__hw.loading === false
    && (window.__hw.loadedRender || !document.querySelector('[data-testid=timeline]')), null, { timeout: 30000 });
}

/**
 * selectedOnceOffered returns the value of the filter labelled label once
 * it offers value. A filter's options are what the page loaded (the
 * events come after the model), and it holds the value the URL names only
 * once that option is drawn. A link followed in the same page is applied a
 * frame or two after the navigation: the value is given that long to
 * show, then read whatever it is.
 */
async function selectedOnceOffered(page, label, value) {
  const sel = `select[aria-label="${label}"]`;
  await page.waitForFunction(([s, v]) => [...(document.querySelector(s)?.options || [])].some((o) => o.value === v), [sel, value]);
  await page.waitForFunction(([s, v]) => document.querySelector(s)?.value === v, [sel, value], { timeout: 2000 }).catch(() => {});
  return page.getByLabel(label, { exact: true }).inputValue();
}

/** expected reads what the API says about a session: its events, agents and calls. */
async function expected(id) {
  const p = `/v1/sessions/${encodeURIComponent(id)}`;
  const events = await all(p + '/events', 'events');
  const toolCalls = await all(p + '/tool-calls', 'tool_calls');
  const agentList = await all(p + '/agents', 'agents');
  const calls = new Map(); // agent id -> Set of tool_use_id
  const agents = new Set(agentList.map((a) => a.agent_id));
  for (const a of agents) calls.set(a, new Set());
  for (const c of toolCalls) {
    if (!calls.has(c.agent_id)) calls.set(c.agent_id, new Set());
    calls.get(c.agent_id).add(c.tool_use_id);
  }
  return { events, agents, calls, toolCalls, agentList, session: (await api(p)).body };
}

function clean(seen) {
  assert.deepEqual(seen.errors, [], 'uncaught errors in the page');
  assert.deepEqual(seen.dialogs, [], 'dialogs opened');
  assert.deepEqual(seen.console, [], 'console errors');
}

test('the session list shows every session the API has, and its filters work', async () => {
  const sessions = await all('/v1/sessions', 'sessions');
  const { page, seen } = await open('/#/');
  const count = page.getByTestId('session-count');
  await assert.doesNotReject(count.filter({ hasText: new RegExp(`^${sessions.length.toLocaleString('en')} sessions$`) }).waitFor({ timeout: 15000 }),
    `want ${sessions.length} sessions`);
  // The real client's session is listed with its project.
  await page.getByLabel('Search sessions').fill(REAL.slice(0, 8));
  await count.filter({ hasText: /^1 of / }).waitFor();
  const row = page.locator(`[data-session="${REAL}"]`);
  const real0 = sessions.find((s) => s.id === REAL);
  await row.waitFor();
  assert.match(await row.innerText(), /demo/);
  // Its failed calls are the collector's failures; the calls the client
  // rejected, counted apart, are said on the cell.
  const failedCell = row.locator('.num.bad').filter({ hasText: new RegExp(`^${real0.counts.failures}$`) });
  assert.equal(await failedCell.getAttribute('title'), `and ${real0.counts.rejected} rejected: calls the client refused to run`);

  await page.getByLabel('Search sessions').fill('');
  // Projects group as the collector groups them (how they read: 'projects
  // that share a name read as their directories in the Project filter').
  const key = (s) => s.project || s.cwd || '';
  const real = sessions.find((s) => s.id === REAL);
  assert.equal(real.project_name, 'demo');
  await page.getByLabel('Project', { exact: true }).selectOption(key(real));
  assert.equal(await page.getByLabel('Project', { exact: true }).inputValue(), key(real));
  const demo = sessions.filter((s) => key(s) === key(real)).length;
  await count.filter({ hasText: new RegExp(`^${demo} of `) }).waitFor();
  await page.getByLabel('Project', { exact: true }).selectOption('');

  const ended = sessions.filter((s) => (s.status || (s.ended_at ? 'ended' : 'running')) === 'ended').length;
  await page.getByLabel('Status', { exact: true }).selectOption('ended');
  await count.filter({ hasText: new RegExp(`^${ended.toLocaleString('en')} of `) }).waitFor();
  // Filters live in the URL: a reload keeps them.
  await page.waitForURL(/status=ended/);
  await page.reload();
  await count.filter({ hasText: new RegExp(`^${ended.toLocaleString('en')} of `) }).waitFor();
  await page.getByLabel('Status', { exact: true }).selectOption('');

  const hour = sessions.filter((s) => Date.parse(s.last_event_at) >= Date.now() - 3600e3).length;
  await page.getByLabel('Time range', { exact: true }).selectOption('1h');
  await count.filter({ hasText: new RegExp(`^${hour.toLocaleString('en')}( of |\\s)`) }).waitFor();
  await page.getByLabel('Time range', { exact: true }).selectOption('');
  clean(seen);
  await page.close();
});

test('the agent tree and the lanes show the agents and calls the API has', async () => {
  const want = await expected(REAL);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL));
  await loaded(page);
  const tree = await page.$$eval('[role=treeitem]', (els) => els.map((e) => ({ id: e.dataset.agent, type: e.dataset.type, level: +e.getAttribute('aria-level'), calls: +e.dataset.calls })));
  assert.deepEqual(new Set(tree.map((a) => a.id)), want.agents, 'agents in the tree');
  for (const a of tree) {
    assert.equal(a.calls, want.calls.get(a.id).size, `calls of agent "${a.id}"`);
    assert.equal(a.level, a.id === '' ? 1 : 2, `agent "${a.id}" nests under main`);
  }
  assert.equal(tree[0].id, '', 'main agent first');
  // The compaction agent keeps its empty type, apart from an unknown one.
  assert.ok(tree.some((a) => a.type === '' && a.id !== ''), 'compaction agent shown');
  const lanes = await page.evaluate(() => window.__hw.timeline.lanes());
  assert.deepEqual(lanes.map((l) => l.agent), tree.map((a) => a.id), 'one lane per agent, in tree order');
  assert.deepEqual(lanes.map((l) => l.calls), tree.map((a) => a.calls), 'each lane draws its agent\'s calls');
  // Subagents that ran in parallel overlap in time.
  const spans = await page.evaluate(() => [...window.__hw.model.agents.values()].filter((a) => a.type === 'Explore' || a.type === 'general-purpose').map((a) => [a.start, a.stop]));
  assert.equal(spans.length, 2);
  assert.ok(spans[0][0] < spans[1][1] && spans[1][0] < spans[0][1], 'the two subagents overlap');
  // The header shows the collector's counts.
  const facts = await page.locator('.facts').innerText();
  const c = want.session.counts;
  assert.match(facts, new RegExp(`\\b${c.tool_calls} tool calls\\b`));
  assert.match(facts, new RegExp(`\\b${c.agents} agents\\b`));
  assert.match(facts, new RegExp(`\\b${c.failures} failed\\b`));
  assert.ok(c.rejected > 0, 'the capture has rejected calls');
  assert.match(facts, new RegExp(`\\b${c.rejected} rejected\\b`));
  assert.equal(c.tool_calls, want.toolCalls.length);
  // Counts read as English: "1 call", never "1 calls".
  const text = await page.locator('.session').innerText();
  assert.doesNotMatch(text, /\b1 (calls|agents|events|tool calls)\b/);
  const one = await page.locator('[role=treeitem]').filter({ hasText: /\b1 call\b/ }).count();
  assert.equal(one, want.agentList.filter((a) => a.tool_count === 1).length, 'agents with one call say "1 call"');

  // The per-turn view groups by prompt_id.
  await page.getByRole('tab', { name: 'Turns' }).click();
  const prompts = new Set(want.events.map((e) => e.prompt_id || ''));
  assert.equal(await page.locator('.turn').count(), prompts.size);
  await page.locator('.turn').filter({ hasText: 'tidy the project' }).locator('.thead').click();
  await page.locator('.turn.open .erow').first().waitFor();

  // Numbers: per tool counts and quantiles.
  await page.getByRole('tab', { name: 'Numbers' }).click();
  const tools = page.getByRole('table', { name: 'tool' });
  await tools.waitFor();
  const bash = await tools.locator('tr', { hasText: /^Bash/ }).innerText();
  assert.match(bash, /^Bash\s+2\s+1\s+50%/, 'Bash: 2 calls, 1 failed');
  // The client refused both Glob calls: rejected, not failed, as the
  // collector counts them.
  const glob = await tools.locator('tr', { hasText: /^Glob/ }).innerText();
  assert.match(glob, /^Glob\s+2\s+0\s+0%\s+2\s+0\b/, 'Glob: 2 calls, 2 rejected');
  clean(seen);
  await page.close();
});

test('clicking a tool call on the timeline opens its details', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL));
  await loaded(page);
  const id = 'toolu_00000009'; // Bash `go vet`, failed with exit code 3
  const r = await page.evaluate((id) => { window.__hw.timeline.focus(id); return true; }, id);
  assert.ok(r);
  await page.waitForTimeout(100); // one frame for the redraw
  const rect = await page.evaluate((id) => window.__hw.timeline.rectOf(id), id);
  assert.ok(rect && rect.w > 4, 'the call is drawn: ' + JSON.stringify(rect));
  await page.mouse.click(rect.x + rect.w / 2, rect.y + rect.h / 2);
  const insp = page.getByTestId('inspector');
  await insp.waitFor();
  const text = await insp.innerText();
  for (const want of ['Bash', 'error', id, 'go vet ./...', 'Exit code 3', 'duration', '38 ms']) {
    assert.ok(text.includes(want), `inspector shows ${want}:\n${text}`);
  }
  // The raw payload as pretty JSON.
  const raw = insp.locator('details.raw', { has: page.locator('summary', { hasText: 'PreToolUse' }) });
  await raw.locator('summary').click();
  assert.match(await raw.locator('pre.json').innerText(), /"hook_event_name": "PreToolUse"/);
  // Clicking an empty spot clears the selection.
  await page.keyboard.press('Escape');
  await insp.waitFor({ state: 'detached' });
  clean(seen);
  await page.close();
});

test('the timeline zooms and pans', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(PARALLEL));
  await loaded(page);
  const view = () => page.evaluate(() => window.__hw.timeline.view());
  const fit = await view();
  assert.equal(fit.fit, true);
  const canvas = page.locator('.tl-canvas');
  await canvas.focus();
  await page.keyboard.press('w');
  await page.keyboard.press('w');
  const zoomed = await view();
  assert.ok(zoomed.t1 - zoomed.t0 < (fit.t1 - fit.t0) * 0.6, 'zoomed in');
  // Drag to the left: later times come into view.
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + 600, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + 400, box.y + 100, { steps: 5 });
  await page.mouse.up();
  const panned = await view();
  assert.ok(panned.t0 > zoomed.t0, 'panned');
  assert.ok(Math.abs((panned.t1 - panned.t0) - (zoomed.t1 - zoomed.t0)) < 1, 'panning keeps the zoom');
  // ctrl+wheel zooms out around the pointer.
  await page.mouse.move(box.x + 300, box.y + 100);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, 400);
  await page.keyboard.up('Control');
  const out = await view();
  assert.ok(out.t1 - out.t0 > panned.t1 - panned.t0, 'zoomed out');
  await page.getByRole('button', { name: 'Fit' }).click();
  assert.equal((await view()).fit, true);
  clean(seen);
  await page.close();
});

test('filters narrow the timeline and the event list, and survive a reload', async () => {
  const want = await expected(REAL);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL));
  await loaded(page);
  const lanes = () => page.evaluate(() => window.__hw.timeline.lanes());
  const sum = (ls) => ls.reduce((n, l) => n + l.calls, 0);

  const reads = want.toolCalls.filter((c) => c.tool_name === 'Read').length;
  await page.getByLabel('Tool', { exact: true }).selectOption('Read');
  assert.equal(sum(await lanes()), reads, 'Read calls');

  await page.getByLabel('Tool', { exact: true }).selectOption('');
  const explore = want.agentList.find((a) => a.agent_type === 'Explore').agent_id;
  await page.getByLabel('Agent', { exact: true }).selectOption(explore);
  // Its lane, under main's as context.
  const only = await lanes();
  assert.deepEqual(only.map((l) => [l.agent, l.context]), [['', true], [explore, false]]);
  assert.equal(only[1].calls, want.calls.get(explore).size);
  assert.equal(only[0].calls, 0);

  await page.getByLabel('Agent', { exact: true }).selectOption('*');
  // The status filter offers the statuses the collector gave the calls,
  // after failed (its verdict: an error or an interruption).
  const offered = await page.getByLabel('Status', { exact: true }).locator('option').evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
  assert.deepEqual(offered, ['failed', ...[...new Set(want.toolCalls.map((c) => c.status))].sort()]);
  await page.getByLabel('Status', { exact: true }).selectOption('error');
  assert.equal(sum(await lanes()), want.toolCalls.filter((c) => c.status === 'error').length, 'calls that ended in an error');
  await page.getByLabel('Status', { exact: true }).selectOption('failed');
  assert.equal(sum(await lanes()), want.toolCalls.filter((c) => c.failed === true).length, 'failed calls');
  await page.getByLabel('Status', { exact: true }).selectOption('rejected');
  assert.ok(sum(await lanes()) >= 1, 'calls the client rejected');
  await page.getByLabel('Status', { exact: true }).selectOption('');

  await page.getByRole('tab', { name: 'Events' }).click();
  const list = page.getByRole('list', { name: 'Events' });
  assert.equal(+(await list.getAttribute('data-count')), want.events.length);
  await page.getByLabel('Event', { exact: true }).selectOption('UserPromptSubmit');
  const prompts = (await all(`/v1/sessions/${REAL}/events?event=UserPromptSubmit`, 'events')).length;
  await page.waitForFunction((n) => +document.querySelector('[aria-label=Events][data-count]').dataset.count === n, prompts);
  await page.waitForURL(/event=UserPromptSubmit/);
  await page.reload();
  await loaded(page);
  assert.equal(await selectedOnceOffered(page, 'Event', 'UserPromptSubmit'), 'UserPromptSubmit');
  assert.equal(+(await page.getByRole('list', { name: 'Events' }).getAttribute('data-count')), prompts);
  // An event opens in the inspector with its payload.
  await page.locator('.erow').first().click();
  assert.match(await page.getByTestId('inspector').innerText(), /tidy the project/);
  clean(seen);
  await page.close();
});

test('a filter hides the lanes it leaves empty, keeps their ancestors as context, says how many, and shows them on demand', async () => {
  const want = await expected(REAL);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL));
  await loaded(page);
  const lanes = (p) => p.evaluate(() => window.__hw.timeline.lanes());
  const tree = (p) => p.$$eval('[role=treeitem]', (els) => els.map((e) => ({ agent: e.dataset.agent, level: +e.getAttribute('aria-level'), context: e.dataset.context === 'true', title: e.title })));
  const all = [...want.agents];
  // Unfiltered, every agent has its lane, the compaction agent's without a call too.
  assert.ok(all.some((a) => want.calls.get(a).size === 0), 'the capture has an agent without calls');
  assert.equal((await lanes(page)).length, all.length);
  assert.equal(await page.getByTestId('lanes-hidden').count(), 0);
  assert.ok((await tree(page)).every((r) => !r.context), 'no context lane unfiltered');

  // A filter keeps the lanes of the agents with such calls and, dimmed as
  // context, those of their ancestors (parent_agent_id; main above the
  // rest), so that the tree still reads as a tree; the note counts the
  // others, hidden.
  let hiddenSeen = 0, contextSeen = 0;
  const check = async (p, sid, label, value, pred) => {
    const w = sid === REAL ? want : await expected(sid);
    const parents = new Map(w.agentList.map((a) => [a.agent_id, a.parent_agent_id]));
    const parentOf = (id) => (id === '' ? null : parents.has(parents.get(id)) && parents.get(id) !== id ? parents.get(id) : '');
    const keep = new Set(w.toolCalls.filter(pred).map((c) => c.agent_id));
    const shown = new Set(keep);
    for (const a of keep) for (let q = parentOf(a); q != null && !shown.has(q); q = parentOf(q)) shown.add(q);
    const context = new Set([...shown].filter((a) => !keep.has(a)));
    const hidden = w.agents.size - shown.size;
    const at = `${sid} ${label} ${value}`;
    assert.ok(keep.size > 0, `${at}: some agent has such calls`);
    await p.getByLabel(label, { exact: true }).selectOption(value);
    const ls = await lanes(p);
    assert.deepEqual(new Set(ls.map((l) => l.agent)), shown, `${at}: the lanes of the agents with such calls and of their ancestors`);
    assert.deepEqual(new Set(ls.filter((l) => l.context).map((l) => l.agent)), context, `${at}: the ancestors without such calls are context`);
    assert.ok(ls.every((l) => (l.context ? l.calls === 0 : l.calls > 0)), `${at}: no empty lane but context: ${JSON.stringify(ls)}`);
    const rows = await tree(p);
    assert.deepEqual(rows.map((r) => r.agent), ls.map((l) => l.agent), `${at}: the tree beside the lanes`);
    assert.deepEqual(rows.map((r) => r.context), ls.map((l) => l.context === true), `${at}: the tree marks the context rows`);
    // A tree: the first row at the top, none deeper than one below the row above it.
    assert.equal(rows[0].level, 1, `${at}: main first`);
    for (const [k, r] of rows.entries()) if (k > 0) assert.ok(r.level <= rows[k - 1].level + 1, `${at}: ${r.agent} is under its parent: ${JSON.stringify(rows)}`);
    for (const r of rows.filter((x) => x.context)) assert.match(r.title, /none of its calls or events matches the filters/, `${at}: a context row says why it is there`);
    const note = p.getByTestId('lanes-hidden');
    if (hidden === 0) assert.equal(await note.count(), 0, `${at}: nothing hidden, no note`);
    else {
      assert.match(await note.innerText(), new RegExp(`^${hidden} agents? hidden\\b`), `${at}: the note counts the lanes hidden, not the context`);
      // Shown on demand, and hidden again; the context stays context.
      await note.getByRole('button').click();
      const every = await lanes(p);
      assert.equal(every.length, w.agents.size, `${at}: every lane on demand`);
      assert.deepEqual(new Set(every.filter((l) => l.context).map((l) => l.agent)), context, `${at}: the same context on demand`);
      assert.match(await note.innerText(), new RegExp(`\\b${hidden} agents? with no`));
      await note.getByRole('button').click();
      assert.equal((await lanes(p)).length, shown.size);
    }
    hiddenSeen += hidden;
    contextSeen += context.size;
    await p.getByLabel(label, { exact: true }).selectOption('');
  };
  for (const [label, value, pred] of [['Tool', 'Read', (c) => c.tool_name === 'Read'], ['Status', 'failed', (c) => c.failed === true]]) await check(page, REAL, label, value, pred);
  // The demo's chain main → general-purpose → test-runner → Explore: the
  // test runner's failure keeps the agents above it in sight.
  const story = await open('/#/s/' + encodeURIComponent(STORY));
  await loaded(story.page);
  for (const [label, value, pred] of [['Status', 'failed', (c) => c.failed === true], ['Tool', 'Grep', (c) => c.tool_name === 'Grep']]) await check(story.page, STORY, label, value, pred);
  clean(story.seen);
  await story.page.close();
  assert.ok(hiddenSeen > 0, 'some filter hides some lanes');
  assert.ok(contextSeen > 0, 'some filter keeps an ancestor as context');

  // The agent a filter picks keeps its lane, calls or none, under its
  // ancestors as context.
  const empty = all.find((a) => a !== '' && want.calls.get(a).size === 0);
  const up = [];
  for (let p = want.agentList.find((a) => a.agent_id === empty)?.parent_agent_id; p != null && !up.includes(p); p = p === '' ? null : want.agentList.find((a) => a.agent_id === p)?.parent_agent_id) up.unshift(p);
  await page.getByLabel('Agent', { exact: true }).selectOption(empty);
  await page.getByLabel('Tool', { exact: true }).selectOption('Read');
  assert.deepEqual((await lanes(page)).map((l) => [l.agent, l.context]), [...up.map((a) => [a, true]), [empty, false]]);
  assert.equal(await page.getByTestId('lanes-hidden').count(), 0);
  await page.getByRole('button', { name: 'clear filters' }).click();
  assert.equal((await lanes(page)).length, all.length, 'every lane again once the filters are cleared');
  assert.equal(await page.getByTestId('lanes-hidden').count(), 0);
  clean(seen);
  await page.close();
});

test('the Agent filter shows the agent it picks under its ancestors, as context', async () => {
  // The demo's chain main → general-purpose → test-runner → Explore: the
  // deepest agent, picked alone, reads as the end of that chain, not as a
  // row indented under nothing.
  const want = await expected(STORY);
  const parents = new Map(want.agentList.map((a) => [a.agent_id, a.parent_agent_id]));
  const chain = (id) => {
    const out = [id];
    for (let p = parents.get(id); id !== '' && p != null && !out.includes(p); p = p === '' ? null : parents.get(p)) out.unshift(p);
    return out;
  };
  const deepest = [...want.agents].reduce((a, b) => (chain(b).length > chain(a).length ? b : a), '');
  assert.ok(chain(deepest).length >= 4, `a chain three deep: ${chain(deepest)}`);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(STORY));
  await loaded(page);
  const lanes = () => page.evaluate(() => window.__hw.timeline.lanes());
  const tree = () => page.$$eval('[role=treeitem]', (els) => els.map((e) => ({ agent: e.dataset.agent, level: +e.getAttribute('aria-level'), context: e.dataset.context === 'true', title: e.title })));
  for (const id of [deepest, parents.get(deepest), '']) {
    const agent = page.getByLabel('Agent', { exact: true });
    await agent.selectOption(id === '' ? 'main' : id);
    const path = chain(id);
    const ls = await lanes();
    assert.deepEqual(ls.map((l) => [l.agent, l.context]), path.map((a) => [a, a !== id]), `${id || 'main'}: its lane under its ancestors' as context`);
    assert.ok(ls.every((l) => (l.context ? l.calls === 0 : true)), `${id || 'main'}: the context lanes draw none of their calls`);
    const rows = await tree();
    assert.deepEqual(rows.map((r) => r.agent), path, `${id || 'main'}: the tree beside the lanes`);
    assert.deepEqual(rows.map((r) => r.level), path.map((_, i) => i + 1), `${id || 'main'}: each row one below the one above`);
    for (const r of rows.filter((x) => x.context)) assert.match(r.title, /shown for the agents below it/, `${id || 'main'}: a context row says why it is there`);
    assert.equal(await page.getByTestId('lanes-hidden').count(), 0, `${id || 'main'}: the agents the Agent filter leaves out are not "hidden" lanes`);
  }
  await page.getByRole('button', { name: 'clear filters' }).click();
  assert.equal((await lanes()).length, want.agents.size);
  assert.ok((await tree()).every((r) => !r.context), 'no context once the filters are cleared');
  clean(seen);
  await page.close();
});

test('a new event arriving over the stream shows without a reload', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL));
  await loaded(page);
  await page.evaluate(() => { window.__sameDocument = true; });
  await page.waitForFunction(() => document.querySelector('.live')?.dataset.state === 'live');
  const before = +(await page.locator('[role=treeitem][data-agent=""]').getAttribute('data-calls'));
  const id = 'toolu_live_' + Date.now();
  const base = { session_id: REAL, cwd: '/home/dev/src/demo', transcript_path: '/t.jsonl', tool_name: 'LiveProbe', tool_use_id: id, tool_input: { command: 'echo live' } };
  const env = (n, payload) => ({ id: `live-${id}-${n}`, runtime: 'claude-code', kind: 'hook', received_at: new Date().toISOString(), payload });
  await post([env(1, { ...base, hook_event_name: 'PreToolUse' })]);
  const t0 = Date.now();
  const appeared = page.waitForFunction(([id, n]) => window.__hw.model.calls.has(id)
    && +document.querySelector('[role=treeitem][data-agent=""]').dataset.calls === n, [id, before + 1], { timeout: 10000 });
  await appeared;
  const latency = Date.now() - t0;
  // The goal is one second; on a loaded machine the bound is soft (timings
  // are measured by the benchmark), but the event must arrive live.
  console.log(`# stream latency: ${latency} ms (goal < 1000 ms)`);
  if (latency > 1000) console.log('# WARNING: the live event took longer than one second');
  await post([env(2, { ...base, hook_event_name: 'PostToolUse', tool_response: { stdout: 'live' }, duration_ms: 5 })]);
  await page.waitForFunction((id) => window.__hw.model.calls.get(id)?.status === 'ok', id);
  // An event too large to come whole on the stream is read from the API.
  const big = id + '_big';
  await post([env(3, { ...base, hook_event_name: 'PreToolUse', tool_use_id: big, tool_name: 'Write', tool_input: { file_path: '/tmp/big.txt', content: 'line of a large file\n'.repeat(5000) } })]);
  await page.waitForFunction((big) => window.__hw.model.eventsOf(big).some((e) => e.envelope?.payload?.tool_input?.content?.length === 105000), big, { timeout: 10000 });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no reload');

  // The session list picks up a new session live too.
  await page.goto(BASE + '/#/');
  await page.evaluate(() => { window.__sameDocument = true; });
  const count = page.getByTestId('session-count');
  await count.filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  const n = +(await count.innerText()).replace(/\D/g, '');
  const sid = '11111111-2222-4333-8444-' + String(Date.now()).slice(-12).padStart(12, '0');
  await post([{ id: 'live-session-' + sid, runtime: 'claude-code', kind: 'hook', received_at: new Date().toISOString(),
    payload: { session_id: sid, cwd: '/home/dev/src/live', hook_event_name: 'SessionStart', source: 'startup', session_title: 'Arrived live' } }]);
  const t1 = Date.now();
  await page.locator(`[data-session="${sid}"]`).waitFor({ timeout: 10000 });
  console.log(`# session list latency: ${Date.now() - t1} ms`);
  await count.filter({ hasText: new RegExp(`^${(n + 1).toLocaleString('en')} sessions$`) }).waitFor();
  assert.match(await page.locator(`[data-session="${sid}"]`).innerText(), /Arrived live/);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no reload');
  clean(seen);
  await page.close();
});

/** streams cuts the pages' streams and holds their reconnections (hold true), or lets them through (see streamGate). */
async function streams(hold) {
  const res = await fetch(BASE + '/test/streams?hold=' + (hold ? 1 : 0), { method: 'POST' });
  assert.equal(res.status, 204);
}

const hookEnv = (sid, n, payload) => ({ id: `${sid}-${n}`, runtime: 'claude-code', kind: 'hook', received_at: new Date().toISOString(),
  payload: { session_id: sid, cwd: '/home/dev/src/live', transcript_path: '/t.jsonl', ...payload } });
const newID = (prefix) => prefix + '-0000-4000-8000-' + String(Date.now()).slice(-12).padStart(12, '0');
const liveState = (page) => page.waitForFunction(() => document.querySelector('.live')?.dataset.state === 'live');

/** holdModel holds the collector's model back from the next round that changes session id on, or lets it go (id empty): see modelGate. */
async function holdModel(id) {
  const res = await fetch(BASE + '/test/model' + (id ? '?hold=' + encodeURIComponent(id) : ''), { method: 'POST' });
  assert.equal(res.status, 204);
}

/**
 * startHeld starts session sid with the SessionStart start (extra fields
 * of it) and holds the model back from the rounds after that first one,
 * which it waits to see modelled: the events posted next stay unmodelled
 * until holdModel('').
 */
async function startHeld(sid, start = {}) {
  await holdModel(sid);
  await post([hookEnv(sid, 1, { hook_event_name: 'SessionStart', source: 'startup', ...start })]);
  // Its first round is stored, and holds the model back.
  for (let i = 0; ; i++) {
    const { body } = await api('/v1/sessions/' + sid);
    if (body && body.derived_seq === body.last_seq) break;
    assert.ok(i < 100, 'the first event of the session was not modelled');
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a session the collector has yet to model says so in its header, until the model catches up', async () => {
  const sid = newID('5e1d0b1d');
  const call = 'toolu_behind_' + Date.now();
  const tool = { tool_name: 'Bash', tool_use_id: call, tool_input: { command: 'go test ./...' } };
  try {
    await startHeld(sid);
    await post([
      hookEnv(sid, 2, { hook_event_name: 'UserPromptSubmit', prompt: 'run the tests' }),
      hookEnv(sid, 3, { hook_event_name: 'PreToolUse', ...tool }),
      hookEnv(sid, 4, { hook_event_name: 'PostToolUse', ...tool, tool_response: { stdout: 'ok' }, duration_ms: 1200 }),
    ]);
    const { page, seen } = await open('/#/s/' + encodeURIComponent(sid));
    await loaded(page);
    const note = page.getByTestId('modelling');
    await note.filter({ hasText: /^modelling… \(3 events to go\)$/ }).waitFor({ timeout: 10000 });
    assert.equal(await page.evaluate((call) => window.__hw.model.calls.has(call), call), false, 'the call is not modelled yet');

    await holdModel('');
    await page.waitForFunction((call) => window.__hw.model.calls.get(call)?.status === 'ok', call, { timeout: 10000 });
    await note.waitFor({ state: 'detached', timeout: 10000 });
    clean(seen);
    await page.close();
  } finally {
    await holdModel('');
  }
});

test('the session list says which sessions the collector has yet to model, until the model catches up', async () => {
  const sid = newID('5e1d0b2d');
  const tool = { tool_name: 'Bash', tool_use_id: 'toolu_list_behind_' + Date.now(), tool_input: { command: 'go vet ./...' } };
  try {
    await startHeld(sid, { session_title: 'Modelled late' });
    await post([
      hookEnv(sid, 2, { hook_event_name: 'UserPromptSubmit', prompt: 'vet it' }),
      hookEnv(sid, 3, { hook_event_name: 'PreToolUse', ...tool }),
      hookEnv(sid, 4, { hook_event_name: 'PostToolUse', ...tool, tool_response: { stdout: '' }, duration_ms: 900 }),
    ]);
    const { page, seen } = await open('/#/?q=' + sid);
    const row = page.locator(`[data-session="${sid}"]`);
    await row.waitFor();
    // Its events are counted (the store's), its calls not yet (the model's): the row says why.
    const note = row.getByTestId('modelling');
    await note.waitFor({ timeout: 10000 });
    assert.equal((await note.innerText()).trim(), 'modelling…');
    assert.match(await note.getAttribute('title'), /works out the calls and agents/);
    assert.equal(await page.getByTestId('modelling').count(), 1, 'only the session behind says so');

    await holdModel('');
    await note.waitFor({ state: 'detached', timeout: 10000 });
    clean(seen);
    await page.close();
  } finally {
    await holdModel('');
  }
});

test('pages that received nothing catch up with what was stored while their stream was down', async () => {
  const sid = newID('c0ffee01');
  const pre = (n) => ({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: `toolu_down_${n}`, tool_input: { command: `echo ${n}` } });
  await post([hookEnv(sid, 0, { hook_event_name: 'SessionStart', source: 'startup' }), hookEnv(sid, 1, pre(1))]);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(sid));
  await loaded(page);
  await liveState(page);
  const list = await open('/#/');
  await list.page.locator(`[data-session="${sid}"]`).waitFor();
  await liveState(list.page);
  for (const p of [page, list.page]) await p.evaluate(() => { window.__sameDocument = true; });
  // Nothing came on either stream since it opened. It is cut, and while
  // the pages cannot reconnect a call starts and a session begins.
  await streams(true);
  try {
    for (const p of [page, list.page]) await p.waitForFunction(() => document.querySelector('.live')?.dataset.state !== 'live');
    const other = newID('c0ffee02');
    await post([hookEnv(sid, 2, pre(2)), hookEnv(other, 0, { hook_event_name: 'SessionStart', source: 'startup', session_title: 'Begun while away' })]);
    await streams(false);
    await page.waitForFunction(() => /\b2 tool calls\b/.test(document.querySelector('.facts')?.innerText || ''), null, { timeout: 15000 });
    assert.ok(await page.evaluate(() => window.__hw.model.calls.has('toolu_down_2')));
    await list.page.locator(`[data-session="${other}"]`).waitFor({ timeout: 15000 });
    assert.match(await list.page.locator(`[data-session="${other}"]`).innerText(), /Begun while away/);
  } finally {
    await streams(false);
  }
  for (const p of [page, list.page]) assert.equal(await p.evaluate(() => window.__sameDocument), true, 'no reload');
  clean(seen);
  clean(list.seen);
  await page.close();
  await list.page.close();
});

test('a page whose stream stays down says so in a banner, gone when it reconnects; a blip passes unsaid', async () => {
  const { page, seen } = await open('/#/');
  await page.locator('[data-session]').first().waitFor();
  await liveState(page);
  const first = await page.locator('[data-session]').first().getAttribute('data-session');
  // Whether the banner ever showed, however briefly.
  await page.evaluate(() => {
    window.__downSeen = false;
    new MutationObserver(() => { if (document.querySelector('[data-testid="stream-down"]')) window.__downSeen = true; })
      .observe(document.body, { childList: true, subtree: true });
  });
  const banner = page.locator('[data-testid="stream-down"]');
  try {
    // A blip: cut, and let through again at once.
    await streams(true);
    await page.waitForFunction(() => document.querySelector('.live')?.dataset.state !== 'live');
    await new Promise((r) => setTimeout(r, 300));
    await streams(false);
    await liveState(page);
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(await page.evaluate(() => window.__downSeen), false, 'the banner showed on a blip');

    // Down for good: said after a moment, at the top, politely.
    await streams(true);
    await page.waitForFunction(() => document.querySelector('.live')?.dataset.state !== 'live');
    const cut = Date.now();
    await banner.waitFor({ timeout: 10000 });
    assert.ok(Date.now() - cut >= 1500, `the banner showed ${Date.now() - cut} ms after the stream went down`);
    assert.equal(await banner.innerText(), `The collector at ${BASE} does not answer; showing what was loaded. Retrying…`);
    const region = page.locator('[role="status"]:has([data-testid="stream-down"])');
    assert.equal(await region.getAttribute('aria-live'), 'polite');
    const [top, header] = await Promise.all([banner.boundingBox(), page.locator('header.top').boundingBox()]);
    assert.ok(top.y >= header.y + header.height - 1 && top.y < header.y + header.height + 40, `the banner is not just below the header: ${JSON.stringify({ top, header })}`);
    // What was loaded stays.
    assert.equal(await page.locator(`[data-session="${first}"]`).count(), 1);
  } finally {
    await streams(false);
  }
  await banner.waitFor({ state: 'detached', timeout: 15000 });
  await liveState(page);
  clean(seen);
  await page.close();
});

/** collectorDown stops the collector answering the pages (true) or brings it back (false): see downGate in browser_test.go. */
async function collectorDown(down) {
  const res = await fetch(BASE + '/test/down?down=' + (down ? 1 : 0), { method: 'POST' });
  assert.equal(res.status, 204);
}

test('the banner of a collector that does not answer stays while moving between pages, and goes on a page that follows no stream', async () => {
  const { page, seen } = await open('/#/');
  await page.locator('[data-session]').first().waitFor();
  await liveState(page);
  const banner = page.getByTestId('stream-down');
  await collectorDown(true);
  try {
    await banner.waitFor({ timeout: 10000 });
    assert.equal(await banner.innerText(), `The collector at ${BASE} does not answer; showing what was loaded. Retrying…`);
    // Whether the banner is ever gone, however briefly.
    await page.evaluate(() => {
      window.__bannerGone = false;
      new MutationObserver(() => { if (!document.querySelector('[data-testid="stream-down"]')) window.__bannerGone = true; })
        .observe(document.body, { childList: true, subtree: true });
    });
    // A page opened now loads nothing: the banner no longer says it shows what was loaded.
    for (const hash of ['#/s/' + encodeURIComponent(PARALLEL), '#/s/' + encodeURIComponent(REAL), '#/']) {
      await page.evaluate((h) => { location.hash = h; }, hash);
      await page.waitForFunction((h) => location.hash === h, hash);
      assert.equal(await banner.count(), 1, 'no banner right after moving to ' + hash);
      await page.waitForTimeout(300);
      assert.equal(await page.evaluate(() => window.__bannerGone), false, 'the banner went on moving to ' + hash);
      assert.equal(await banner.innerText(), `The collector at ${BASE} does not answer. Retrying…`, hash);
    }
    // A page that follows no stream retries nothing.
    await page.evaluate(() => { location.hash = '#/no/such/page'; });
    await page.getByTestId('no-page').waitFor();
    await banner.waitFor({ state: 'detached', timeout: 2000 });
  } finally {
    await collectorDown(false);
  }
  await page.evaluate(() => { location.hash = '#/'; });
  await page.locator('[data-session]').first().waitFor();
  await liveState(page);
  assert.equal(await banner.count(), 0);
  seen.console = seen.console.filter((m) => !/net::ERR_EMPTY_RESPONSE/.test(m));
  clean(seen);
  await page.close();
});

test('pages opened while the collector does not answer say so in words, and load once it answers', async () => {
  const fork = (await api('/v1/sessions/' + encodeURIComponent(REAL))).body.child_session_ids[0];
  const want = await api('/v1/sessions/' + encodeURIComponent(PARALLEL));
  let list, session, compare;
  await collectorDown(true);
  try {
    list = await open('/#/');
    session = await open('/#/s/' + encodeURIComponent(PARALLEL));
    compare = await open(`/#/compare/${encodeURIComponent(REAL)}/${encodeURIComponent(fork)}`);
    for (const [p, id, words] of [
      [list.page, 'sessions-error', 'Cannot load sessions: the collector does not answer. They are read again as soon as it answers.'],
      [session.page, 'session-error', 'Cannot load this session: the collector does not answer. It is read again as soon as the collector answers.'],
      [compare.page, 'compare-error', 'Cannot compare these sessions: the collector does not answer. They are compared as soon as it answers.'],
    ]) {
      const said = p.getByTestId(id);
      await said.waitFor({ timeout: 10000 });
      assert.equal(await said.innerText(), words);
    }
  } finally {
    await collectorDown(false);
  }
  // Back: each page reads what it could not, without a reload.
  await list.page.locator(`[data-session="${REAL}"]`).waitFor({ timeout: 15000 });
  assert.equal(await list.page.getByTestId('sessions-error').count(), 0);
  await session.page.getByTestId('session-error').waitFor({ state: 'detached', timeout: 15000 });
  await loaded(session.page);
  assert.match(await session.page.locator('.facts').innerText(), new RegExp(`\\b${want.body.counts.tool_calls.toLocaleString("en")} tool calls\\b`));
  await compare.page.getByTestId('compare-shape').waitFor({ timeout: 15000 });
  for (const { page, seen } of [list, session, compare]) {
    // The refused requests, as the browser logs them.
    seen.console = seen.console.filter((m) => !/net::ERR_EMPTY_RESPONSE/.test(m));
    clean(seen);
    await page.close();
  }
});

/** sseClients reads the streams the collector holds open (hookwatch_sse_clients). */
async function sseClients() {
  const res = await fetch(BASE + '/metrics', { headers: auth });
  assert.equal(res.status, 200);
  const m = /^hookwatch_sse_clients (\d+)$/m.exec(await res.text());
  assert.ok(m, 'no hookwatch_sse_clients on /metrics');
  return +m[1];
}

/**
 * sseClientsReach waits for the collector to hold want streams open. The
 * pages of the tests before are closed, but the collector may see their
 * streams end a moment later: a test counts from what it holds itself.
 */
async function sseClientsReach(want, what) {
  let n;
  for (let i = 0; (n = await sseClients()) !== want; i++) {
    assert.ok(i < 100, `${what}: the collector holds ${n} streams, want ${want}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** setHidden makes the page hidden or shown, as another tab or a minimised window does. */
const setHidden = (page, hidden) => page.evaluate((hidden) => {
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
  document.dispatchEvent(new Event('visibilitychange'));
}, hidden);

test('a page hidden for a while lets go of its stream, and catches up when shown', async () => {
  // A browser keeps six connections to the collector: tabs left in the
  // background must not hold them.
  const sid = newID('c0ffee05');
  const pre = (n) => ({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: `toolu_hidden_${n}`, tool_input: { command: `echo ${n}` } });
  await post([hookEnv(sid, 0, { hook_event_name: 'SessionStart', source: 'startup' }), hookEnv(sid, 1, pre(1))]);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(sid));
  await loaded(page);
  await liveState(page);
  await page.evaluate(() => { window.__sameDocument = true; });
  const open0 = 1; // the page's stream, the only one
  await sseClientsReach(open0, 'the page shown');
  await setHidden(page, true);
  await page.waitForFunction(() => document.querySelector('.live')?.dataset.state === 'paused', null, { timeout: 10000 });
  await sseClientsReach(open0 - 1, 'the hidden page still holds its stream');
  // What happens while it is hidden comes when it shows again, from where
  // its stream left off: no reload.
  await post([hookEnv(sid, 2, pre(2))]);
  await setHidden(page, false);
  await liveState(page);
  await page.waitForFunction(() => window.__hw.model.calls.has('toolu_hidden_2'), null, { timeout: 10000 });
  assert.equal(await sseClients(), open0);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no reload');
  // Hidden for a moment only (a glance at another tab), it keeps it.
  await setHidden(page, true);
  await new Promise((r) => setTimeout(r, 500));
  await setHidden(page, false);
  assert.equal(await page.evaluate(() => document.querySelector('.live')?.dataset.state), 'live');
  clean(seen);
  await page.close();
});

test('the list lets go of its stream while a session is shown, and resumes it on the way back', async () => {
  const { page, seen } = await open('/#/');
  // The stream requests the page sends, with the position each resumes from.
  const streamReqs = [];
  const listReads = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname === '/v1/stream') streamReqs.push({ session: u.searchParams.get('session_id') || '', events: u.searchParams.get('events') || '', resume: r.headers()['last-event-id'] || '' });
    if (u.pathname === '/v1/sessions') listReads.push(r.url());
  });
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor({ timeout: 15000 });
  await liveState(page);
  await page.evaluate(() => { window.__sameDocument = true; });
  const pageStreams = () => page.evaluate(() => ({ ...(window.__hw?.streams || {}) }));
  assert.deepEqual(await pageStreams(), { [LIST_STREAM]: 1 }, 'the list holds one stream');
  const withList = 1; // the list's stream, the only one
  await sseClientsReach(withList, 'the list shown');

  // Into a session, by its row's link: the session's stream replaces the list's.
  await page.locator(`[data-session="${REAL}"] a.t1`).click();
  await loaded(page);
  await liveState(page);
  await sseClientsReach(withList, 'a session shown from the list');
  assert.deepEqual(await pageStreams(), { ['/v1/stream?session_id=' + REAL]: 1 }, 'the page holds the session\'s stream only');

  // A session begins while the list is not shown.
  const sid = newID('c0ffee06');
  await post([hookEnv(sid, 0, { hook_event_name: 'SessionStart', source: 'startup', session_title: 'Begun while a session was shown' })]);
  const reads = listReads.length;
  const sent = streamReqs.length;

  // Back to the list: its stream opens again from where it stopped, and
  // brings the session begun meanwhile without reading the list again.
  await page.goBack();
  await page.locator(`[data-session="${sid}"]`).waitFor({ timeout: 15000 });
  assert.match(await page.locator(`[data-session="${sid}"]`).innerText(), /Begun while a session was shown/);
  await liveState(page);
  await sseClientsReach(withList, 'back on the list');
  assert.deepEqual(await pageStreams(), { [LIST_STREAM]: 1 }, 'the page holds the list\'s stream only');
  const again = streamReqs.slice(sent).filter((r) => !r.session);
  assert.equal(again.length, 1, 'the list opens one stream: ' + JSON.stringify(again));
  assert.match(again[0].resume, /^\d+:\d+$/, 'the list\'s stream resumes from where it stopped');
  assert.equal(again[0].events, 'exclude', 'the list\'s stream asks for no event');
  assert.equal(listReads.length, reads, 'the list is not read again: ' + listReads.slice(reads).join(' '));
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no reload');
  clean(seen);
  await page.close();
});

// LIST_STREAM is the address of the stream the session list follows: the
// model messages only, for it shows no event.
const LIST_STREAM = '/v1/stream?events=exclude';

test('the session list follows the model messages only, and still updates live', async () => {
  const { page, seen } = await open('/#/');
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor({ timeout: 15000 });
  await liveState(page);
  await page.evaluate(() => { window.__sameDocument = true; });
  // The page counts its streams by the address it fetched.
  assert.deepEqual(await page.evaluate(() => ({ ...(window.__hw?.streams || {}) })), { [LIST_STREAM]: 1 }, 'the list holds its stream, without events');

  // A session begins: its row comes from a model message.
  const sid = newID('c0ffee07');
  await post([hookEnv(sid, 0, { hook_event_name: 'SessionStart', source: 'startup', session_title: 'Followed without events' }),
    hookEnv(sid, 1, { hook_event_name: 'UserPromptSubmit', prompt: 'Followed without events' })]);
  const row = page.locator(`[data-session="${sid}"]`);
  await row.waitFor({ timeout: 15000 });
  assert.match(await row.innerText(), /Followed without events/);
  assert.equal(await row.locator('[data-status]').getAttribute('data-status'), 'running');
  // It ends: its status changes in place.
  await post([hookEnv(sid, 2, { hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' })]);
  await page.waitForFunction((sid) => document.querySelector(`[data-session="${sid}"] [data-status]`)?.dataset.status === 'ended', sid, { timeout: 15000 });

  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no reload');
  clean(seen);
  await page.close();
});

/** underPointer returns the session of the row at y pixels into the session list, and that row's top. */
const underPointer = (page, y = 100) => page.evaluate((y) => {
  const l = document.querySelector('.slist').getBoundingClientRect();
  const row = document.elementFromPoint(l.left + 200, l.top + y)?.closest('[data-session]');
  return { id: row?.dataset.session, top: row ? Math.round(row.getBoundingClientRect().top - l.top) : null };
}, y);

test('the session list scrolled down keeps its rows in place while sessions begin and come alive above them', async () => {
  const { page, seen } = await open('/#/');
  const count = page.getByTestId('session-count');
  await count.filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  await liveState(page);
  const n = +(await count.innerText()).replace(/\D/g, '');
  await page.locator('.slist').evaluate((l) => { l.scrollTop = 44 * 20 + 10; });
  await page.waitForTimeout(200);
  const before = await underPointer(page);
  const below = await underPointer(page, 44 * 6);
  assert.ok(before.id && below.id && before.id !== below.id);
  // A session begins (above every row), and one below the view comes alive (moves to the top).
  const sid = newID('5c011ed0');
  await post([hookEnv(sid, 0, { hook_event_name: 'SessionStart', source: 'startup', session_title: 'Begun above the view' })]);
  await count.filter({ hasText: new RegExp(`^${(n + 1).toLocaleString('en')} sessions$`) }).waitFor({ timeout: 10000 });
  await post([hookEnv(below.id, 'alive-' + Date.now(), { hook_event_name: 'UserPromptSubmit', prompt: 'one more thing' })]);
  // Its model stored, the list has its message a moment later.
  for (let i = 0; ; i++) {
    const { body } = await api('/v1/sessions/' + below.id);
    if (body && body.derived_seq === body.last_seq && body.counts?.prompts > 0 && Date.now() - Date.parse(body.last_event_at) < 60e3) break;
    assert.ok(i < 100, 'the prompt was not modelled');
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.waitForTimeout(1000);
  assert.deepEqual(await underPointer(page), before, 'the row under the pointer stays there');
  // At the top, the list shows what begins at the top.
  await page.locator('.slist').evaluate((l) => { l.scrollTop = 0; });
  const other = newID('5c011ed1');
  await post([hookEnv(other, 0, { hook_event_name: 'SessionStart', source: 'startup', session_title: 'Begun at the top' })]);
  await page.waitForFunction((id) => document.querySelector('.slist [data-session]')?.dataset.session === id, other, { timeout: 10000 });
  assert.equal(await page.locator('.slist').evaluate((l) => l.scrollTop), 0);
  clean(seen);
  await page.close();
});

test('a title the session list cuts short is whole in its tooltip', async () => {
  const { body } = await api('/v1/sessions/' + PARALLEL);
  const { page, seen } = await open('/#/?q=' + PARALLEL);
  const link = page.locator(`[data-session="${PARALLEL}"] a.t1`);
  await link.waitFor();
  assert.ok(await link.evaluate((a) => a.scrollWidth > a.clientWidth), 'the title is cut short on screen');
  assert.equal(await link.getAttribute('title'), body.title);
  // An untitled session's link says nothing more than its row.
  await page.getByLabel('Search sessions').fill(PREVIEW);
  const untitled = page.locator(`[data-session="${PREVIEW}"] a.t1`);
  await untitled.waitFor();
  assert.equal(await untitled.getAttribute('title'), null);
  clean(seen);
  await page.close();
});

test('the session list says when a session started and when it was last active, each for what it is', async () => {
  const { body } = await api('/v1/sessions/' + REAL);
  const { page, seen } = await open('/#/?q=' + REAL);
  const when = page.locator(`[data-session="${REAL}"] .when`);
  await when.waitFor();
  const [started, last] = (await when.innerText()).split('\n').map((x) => x.trim());
  assert.match(started, /^\d\d:\d\d$/, 'the start, under the column "started"');
  // The capture's last event was minutes after its start: the second line is not an age of the start.
  assert.match(last, /^active (now|\d+[smhd] ago)$/);
  assert.equal(await when.getAttribute('title'), `started ${body.first_event_at}, last event ${body.last_event_at}`);
  clean(seen);
  await page.close();
});

test('back from a session, the list is where it was, the focus on the session opened', async () => {
  const { page, seen } = await open('/#/');
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  await page.locator('.slist').evaluate((l) => { l.scrollTop = 44 * 40; });
  await page.waitForTimeout(200);
  const was = await underPointer(page, 200);
  const link = page.locator(`[data-session="${was.id}"] a.t1`);
  await link.focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(/#\/s\//);
  await loaded(page);
  await page.goBack();
  await page.locator(`[data-session="${was.id}"]`).waitFor();
  await page.waitForTimeout(200);
  assert.deepEqual(await underPointer(page, 200), was, 'the row opened is where it was');
  assert.equal(await page.evaluate(() => {
    const l = document.activeElement;
    return l?.getAttribute('role') === 'listbox' && document.getElementById(l.getAttribute('aria-activedescendant'))?.dataset.session;
  }), was.id, 'the focus on the list, its selection on the row');
  clean(seen);
  await page.close();
});

test('the session list from the keyboard: arrows and j/k move the selection, Enter opens, Escape and Backspace come back', async () => {
  const sessions = (await all('/v1/sessions', 'sessions')).map((s) => s.id);
  const { page, seen } = await open('/#/');
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  // selected: the session of the row the list says is selected, and that it is the only one.
  const selected = () => page.evaluate(() => {
    const l = document.querySelector('.slist');
    const rows = [...l.querySelectorAll('[role=option][aria-selected=true]')];
    const active = document.getElementById(l.getAttribute('aria-activedescendant') || '');
    return { n: rows.length, id: rows[0]?.dataset.session, active: active?.dataset.session, focused: document.activeElement === l };
  });
  // Tab from the last column header reaches the list, one stop, on its first row.
  await page.getByRole('button', { name: /^calls/ }).focus();
  await page.keyboard.press('Tab');
  assert.deepEqual(await selected(), { n: 1, id: sessions[0], active: sessions[0], focused: true }, 'Tab: the list, its first row selected');
  const steps = [['ArrowDown', 1], ['j', 2], ['j', 3], ['k', 2], ['ArrowUp', 1], ['End', sessions.length - 1], ['Home', 0]];
  for (const [key, i] of steps) {
    await page.keyboard.press(key);
    await page.waitForFunction((id) => document.querySelector('.slist [aria-selected=true]')?.dataset.session === id, sessions[i], { timeout: 2000 }).catch(() => {});
    assert.deepEqual(await selected(), { n: 1, id: sessions[i], active: sessions[i], focused: true }, `${key}: row ${i}`);
  }
  // Past the bottom of the view: the selected row is scrolled into it.
  for (let i = 0; i < 25; i++) await page.keyboard.press('j');
  await page.waitForTimeout(100);
  assert.equal((await selected()).id, sessions[25]);
  const inView = () => page.evaluate(() => {
    const l = document.querySelector('.slist').getBoundingClientRect();
    const r = document.querySelector('.slist [aria-selected=true]').getBoundingClientRect();
    return r.top >= l.top && r.bottom <= l.bottom;
  });
  assert.ok(await inView(), 'the selected row is in view');
  // The selection is visible while the list has the focus.
  const row = page.locator(`.slist [data-session="${sessions[25]}"]`);
  assert.notEqual(await row.evaluate((r) => getComputedStyle(r).outlineStyle), 'none', 'the selected row is outlined');
  const other = page.locator(`.slist [data-session="${sessions[24]}"]`);
  assert.equal(await other.evaluate((r) => getComputedStyle(r).outlineStyle), 'none', 'the others are not');
  const top = await row.evaluate((r) => Math.round(r.getBoundingClientRect().top));
  // Enter opens it; Escape goes back to the list where it was, the selection on it.
  await page.keyboard.press('Enter');
  await page.waitForURL(new RegExp('#/s/' + encodeURIComponent(sessions[25])));
  await loaded(page);
  await page.keyboard.press('Escape');
  await page.waitForURL(/#\/$/);
  await row.waitFor();
  await page.waitForFunction((id) => document.activeElement?.getAttribute('aria-activedescendant') && document.querySelector('.slist [aria-selected=true]')?.dataset.session === id, sessions[25], { timeout: 5000 }).catch(() => {});
  assert.deepEqual(await selected(), { n: 1, id: sessions[25], active: sessions[25], focused: true }, 'Escape: back on the row opened');
  assert.equal(await row.evaluate((r) => Math.round(r.getBoundingClientRect().top)), top, 'where it was');
  // Backspace too, from the next one.
  await page.keyboard.press('j');
  await page.keyboard.press('Enter');
  await page.waitForURL(new RegExp('#/s/' + encodeURIComponent(sessions[26])));
  await loaded(page);
  await page.keyboard.press('Backspace');
  await page.waitForURL(/#\/$/);
  await page.waitForFunction((id) => document.querySelector('.slist [aria-selected=true]')?.dataset.session === id, sessions[26], { timeout: 5000 }).catch(() => {});
  assert.deepEqual(await selected(), { n: 1, id: sessions[26], active: sessions[26], focused: true }, 'Backspace: back on the row opened');
  // Typed in the search box, j and k are letters.
  await page.getByLabel('Search sessions').focus();
  await page.keyboard.type('jk');
  assert.equal(await page.getByLabel('Search sessions').inputValue(), 'jk');
  // Cleared, the list is back, its selection where it was: the next row
  // is the one after it (brought into view, wherever the list was scrolled).
  await page.getByLabel('Search sessions').fill('');
  await page.locator('.slist').focus();
  await page.keyboard.press('j');
  await page.waitForFunction((id) => document.querySelector('.slist [aria-selected=true]')?.dataset.session === id, sessions[27], { timeout: 5000 }).catch(() => {});
  assert.deepEqual(await selected(), { n: 1, id: sessions[27], active: sessions[27], focused: true }, 'the selection stayed, j moves on from it');
  assert.ok(await inView(), 'the selected row is in view');
  clean(seen);
  await page.close();
});

test('the session list follows a filter link within the page, whatever filters it had', async () => {
  const sessions = await all('/v1/sessions', 'sessions');
  const failed = sessions.filter((s) => s.status === 'failed').length;
  const { page, seen } = await open('/#/?status=ended&q=zz');
  const count = page.getByTestId('session-count');
  await page.getByTestId('no-match').waitFor();
  // A link followed in the page: the list shows what it names, and only that.
  await page.evaluate(() => { location.hash = '#/?status=failed'; });
  assert.equal(await selectedOnceOffered(page, 'Status', 'failed'), 'failed');
  assert.equal(await page.getByLabel('Search sessions').inputValue(), '');
  await count.filter({ hasText: new RegExp(`^${failed.toLocaleString('en')} of `) }).waitFor({ timeout: 5000 });
  // The brand's link to the whole list clears them.
  await page.locator('a.brand').click();
  await count.filter({ hasText: /^[\d,]+ sessions$/ }).waitFor({ timeout: 5000 });
  assert.equal(await page.getByLabel('Status', { exact: true }).inputValue(), '');
  clean(seen);
  await page.close();
});

test('a session leaves the time range it was in as time passes, without a change to the list', async () => {
  const sid = '1a57c0de-0000-4000-8000-' + String(Date.now()).slice(-12).padStart(12, '0');
  const t0 = Date.now() - 3600e3 + 40e3; // its last event 59m 20s ago
  await post([{ id: `range-${sid}`, runtime: 'claude-code', kind: 'hook', received_at: new Date(t0).toISOString(),
    payload: { session_id: sid, cwd: '/home/dev/src/range', transcript_path: '/t.jsonl', hook_event_name: 'SessionStart', source: 'startup' } }]);
  // A browser of its own: the clock a page installs is its context's,
  // which the other tests' pages share.
  const own = await launch();
  try {
    const page = await own.ctx.newPage();
    await page.clock.install({ time: new Date() });
    await page.goto(BASE + '/#/?range=1h&q=' + sid);
    await page.locator(`[data-session="${sid}"]`).waitFor();
    // A minute later, the list's clock has ticked: the session is out of the last hour.
    await page.clock.fastForward('01:00');
    await page.getByTestId('no-match').waitFor({ timeout: 5000 });
  } finally {
    await own.close();
  }
});

test('projects that share a name read as their directories in the Project filter', async () => {
  const sessions = await all('/v1/sessions', 'sessions');
  const key = (s) => s.project || s.cwd || '';
  const real = sessions.find((s) => s.id === REAL);
  const namesakes = new Set(sessions.filter((s) => s.project_name === real.project_name).map(key));
  assert.ok(namesakes.size > 1, 'the fixtures hold two projects named demo');
  const { page, seen } = await open('/#/');
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  const options = new Map(await page.$$eval('select[aria-label="Project"] option', (os) => os.map((o) => [o.value, o.textContent])));
  for (const k of namesakes) {
    const label = options.get(k);
    assert.ok(label, `project ${k} offered`);
    assert.doesNotMatch(label, /^-/, `project ${k} reads as a directory, not as the client's folder name`);
    assert.match(label, new RegExp(`/${real.project_name}$`));
  }
  assert.equal(options.get(key(real)), real.cwd);
  assert.equal(new Set([...namesakes].map((k) => options.get(k))).size, namesakes.size, 'each reads apart');
  clean(seen);
  await page.close();
});

test('the Status filter counts as idle the sessions the list marks idle, background work included', async () => {
  const { readFile } = await import('node:fs/promises');
  const sid = 'b6c1d1e0-0000-4000-8000-' + String(Date.now()).slice(-12).padStart(12, '0');
  // The 2.1.332 capture up to its survey agent's launch: the main agent
  // stopped while the background subagent runs, two hours ago.
  const capture = (await readFile('../../testdata/payloads/claude-code-2.1.332.jsonl', 'utf8')).split('\n').slice(0, 34);
  const t0 = Date.now() - 2 * 3600e3 - 60e3;
  await post(capture.map((line, n) => ({ id: `bgidle-${sid}-${n}`, runtime: 'claude-code', kind: 'hook', received_at: new Date(t0 + n * 1000).toISOString(),
    payload: JSON.parse(line.replaceAll('74975720-1a50-4d17-9463-df6fabfdeb7c', sid)) })));
  let want;
  for (let i = 0; i < 50 && want?.status !== 'background'; i++) {
    want = (await api('/v1/sessions/' + sid)).body;
    if (want?.status !== 'background') await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(want.status, 'background');
  const opened = Date.now();
  const { page, seen } = await open('/#/?q=' + sid);
  const pill = page.locator(`[data-session="${sid}"] .pill`);
  await pill.waitFor();
  assert.match(await pill.innerText(), /^idle 2h$/);
  const sessions = await all('/v1/sessions', 'sessions');
  // The sessions idle at a time (a session without a status yet reads
  // running, as statusOf has it): the page counted at a time between
  // its opening and now, when a session may have crossed the hour.
  const idle = (st, t) => sessions.filter((s) => (s.status || 'running') === st && t - Date.parse(s.last_event_at) >= 3600e3).length;
  const counted = async (st) => {
    const text = await page.getByLabel('Status', { exact: true }).locator(`option[value=${st}]`).innerText();
    assert.match(text, /^[a-z ]+ \([\d,]+(, [\d,]+ idle)?\)$/);
    const m = /, ([\d,]+) idle\)$/.exec(text);
    const n = m ? Number(m[1].replaceAll(',', '')) : 0;
    assert.ok(idle(st, opened) <= n && n <= idle(st, Date.now()), `${text}: ${st} sessions idle between ${idle(st, opened)} and ${idle(st, Date.now())}`);
    return n;
  };
  assert.ok(await counted('background') >= 1, 'the background session idle for 2h is counted');
  await counted('running');
  clean(seen);
  await page.close();
});

test('the session list sorts by its column headers, from the keyboard, the order kept in the URL', async () => {
  const sessions = await all('/v1/sessions', 'sessions');
  const byID = new Map(sessions.map((s) => [s.id, s]));
  const of = {
    events: (s) => s.event_count ?? s.counts?.events,
    calls: (s) => s.counts?.tool_calls,
    started: (s) => Date.parse(s.first_event_at),
    active: (s) => Date.parse(s.last_event_at),
  };
  const { page, seen } = await open('/#/');
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  const header = (name) => page.locator('.shead').getByRole('button', { name, exact: true });
  // The rows drawn, top down, by what the column compares.
  const drawn = async (k) => (await page.$$eval('.slist [data-session]', (rows) => rows.map((r) => r.dataset.session))).map((id) => of[k](byID.get(id)));
  const ordered = async (k, asc) => {
    const v = await drawn(k);
    assert.ok(v.length > 5, 'rows drawn');
    for (let i = 1; i < v.length; i++) assert.ok(asc ? v[i - 1] <= v[i] : v[i - 1] >= v[i], `rows in ${asc ? 'ascending' : 'descending'} order of ${k}: ${v.join(' ')}`);
    const all = sessions.map(of[k]);
    assert.equal(v[0], asc ? Math.min(...all) : Math.max(...all), `the first row has the ${asc ? 'least' : 'most'} ${k}`);
  };
  assert.equal(await header('active').getAttribute('aria-sort'), 'descending', 'last activity, newest first, by default');
  await ordered('active', false);

  await header('events').focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(/[?&]sort=events(&|$)/);
  assert.equal(await header('events').getAttribute('aria-sort'), 'descending');
  assert.equal(await header('active').getAttribute('aria-sort'), 'none');
  await ordered('events', false);
  // Pressed again, the other way; the focus stays on the header.
  await page.keyboard.press('Enter');
  await page.waitForURL(/[?&]sort=events\.asc(&|$)/);
  assert.equal(await header('events').getAttribute('aria-sort'), 'ascending');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent.trim()), 'events ▲');
  await ordered('events', true);
  // A reload keeps the order, a filter keeps both in the URL.
  await page.reload();
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  assert.equal(await header('events').getAttribute('aria-sort'), 'ascending');
  await ordered('events', true);

  await header('calls').click();
  await page.waitForURL(/[?&]sort=calls(&|$)/);
  await ordered('calls', false);
  await header('started').click();
  await page.waitForURL(/[?&]sort=started(&|$)/);
  await ordered('started', false);
  // Back to the default: nothing in the URL.
  await header('active').click();
  await page.waitForURL((u) => !/sort=/.test(u.hash));
  await ordered('active', false);
  clean(seen);
  await page.close();
});

test('a link to a session the collector does not know yet shows the session once it begins', async () => {
  const sid = newID('c0ffee03');
  const { page, seen } = await open('/#/s/' + encodeURIComponent(sid));
  await page.getByTestId('not-found').waitFor();
  assert.match(await page.getByTestId('not-found').innerText(), /shows the session as soon as its first event arrives/);
  await liveState(page);
  await post([hookEnv(sid, 0, { hook_event_name: 'SessionStart', source: 'startup' }), hookEnv(sid, 1, { hook_event_name: 'UserPromptSubmit', prompt: 'arrived after the link' }),
    hookEnv(sid, 2, { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: 'toolu_late', tool_input: { command: 'ls' } })]);
  await page.locator('.shdr h2', { hasText: 'arrived after the link' }).waitFor({ timeout: 10000 });
  await page.waitForFunction(() => /\b1 tool call\b/.test(document.querySelector('.facts')?.innerText || ''));
  assert.equal(await page.getByTestId('not-found').count(), 0);
  // The 404s of the first look are the only errors.
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.console.filter((m) => !/404 \(Not Found\)/.test(m)), []);
  await page.close();
});

// cutUntitled lists the elements matching selector that the page cuts short
// (an ellipsis or hidden overflow) with no tooltip on them or their row.
function cutUntitled(page, selector) {
  return page.$$eval(selector, (els) => els.filter((el) => {
    if (el.offsetParent === null || el.scrollWidth <= el.clientWidth + 1) return false;
    for (let e = el, i = 0; e && i < 3; e = e.parentElement, i++) if (e.title) return false;
    return true;
  }).map((el) => `${el.className}: ${el.textContent.slice(0, 40)} (${el.scrollWidth} > ${el.clientWidth})`));
}

test('the Events tab shows each time whole at every width, and every cell it cuts short is whole in its tooltip', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(PARALLEL) + '?tab=events');
  await loaded(page);
  for (const width of [1400, 820, 600]) {
    await page.setViewportSize({ width, height: 900 });
    await page.locator('.erow').first().waitFor();
    const clipped = await page.$$eval('.erow > span:first-child', (els) => els.filter((el) => el.scrollWidth > el.clientWidth).map((el) => el.textContent));
    assert.deepEqual(clipped, [], `times cut short at ${width} px`);
    assert.ok(await page.$$eval('.erow > span:first-child', (els) => els.every((el) => /^\d\d:\d\d:\d\d\.\d{3}$/.test(el.textContent))), 'times to the millisecond');
    assert.deepEqual(await cutUntitled(page, '.erow > span'), [], `cells cut short without a tooltip at ${width} px`);
  }
  // A summary's tooltip begins with what its row shows.
  const sm = await page.$$eval('.erow .sm', (els) => els.filter((el) => el.scrollWidth > el.clientWidth).map((el) => [el.textContent, el.title]));
  assert.ok(sm.length > 0, 'a summary is cut short at 600 px');
  for (const [text, title] of sm) assert.ok(title.startsWith(text.replace(/…$/, '')), `${title} begins with ${text}`);
  clean(seen);
  await page.close();
});

test('the Turns tab\'s prompts and the timeline\'s hint, cut short on a narrow screen, are whole in their tooltips', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(STORY) + '?tab=turns');
  await page.setViewportSize({ width: 820, height: 900 });
  await loaded(page);
  const tp = page.locator('.turn .tp').first();
  await tp.waitFor();
  assert.ok(await tp.evaluate((el) => el.scrollWidth > el.clientWidth), 'the prompt is cut short on screen');
  assert.deepEqual(await cutUntitled(page, '.turn .tp'), []);
  const prompt = await tp.getAttribute('title');
  assert.ok(prompt.startsWith((await tp.textContent()).replace(/…$/, '')), `the tooltip is the prompt: ${prompt}`);
  await page.getByRole('tab', { name: 'Timeline' }).click();
  const hint = page.locator('.tl-tools .hint');
  await hint.waitFor();
  assert.ok(await hint.evaluate((el) => el.scrollWidth > el.clientWidth), 'the hint is cut short on screen');
  assert.equal(await hint.getAttribute('title'), await hint.textContent());
  clean(seen);
  await page.close();
});

test('the Turns tab keeps each turn on one row, its rejected calls in their own column', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL) + '?tab=turns');
  await loaded(page);
  await page.locator('.turn').first().waitFor();
  const rows = await page.$$eval('.turn .thead', (els) => els.map((el) => {
    const cells = [...el.children].filter((c) => getComputedStyle(c).display !== 'none');
    return {
      text: el.innerText.replace(/\s+/g, ' '),
      columns: getComputedStyle(el).gridTemplateColumns.split(' ').length,
      cells: cells.length,
      tops: new Set(cells.filter((c) => c.textContent.trim()).map((c) => c.offsetTop)).size,
    };
  }));
  assert.ok(rows.some((r) => /\brejected\b/.test(r.text)), 'a turn of the capture has rejected calls');
  for (const r of rows) {
    assert.equal(r.cells, r.columns, `a cell per column: ${r.text}`);
    assert.equal(r.tops, 1, `one row: ${r.text}`);
  }
  clean(seen);
  await page.close();
});

test('the Turns tab of a Codex session puts its subagent\'s work in the turn that spawned it', async () => {
  const want = await expected(CODEX);
  assert.equal(want.session.runtime, 'codex');
  assert.equal(want.session.counts.prompts, 1);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(CODEX) + '?tab=turns');
  await loaded(page);
  await page.locator('.turn').first().waitFor();
  const turn = page.locator('.turn', { has: page.locator('.tn', { hasText: '#1' }) });
  const text = (await turn.locator('.thead').innerText()).replace(/\s+/g, ' ');
  assert.match(text, new RegExp(`\\b${want.agents.size} agents\\b`), text);
  assert.match(text, new RegExp(`\\b${want.toolCalls.length} calls\\b`), text);
  // Only the session's start and end are left without a prompt.
  const rest = page.locator('.turn', { has: page.locator('.tn', { hasText: '–' }) });
  assert.equal(await rest.count(), 1);
  assert.match((await rest.innerText()).replace(/\s+/g, ' '), /\b1 agent\b.*\b0 calls\b/);
  clean(seen);
  await page.close();
});

test('a Codex subagent is named by its nickname, as Codex names it, its type beside', async () => {
  const want = await expected(CODEX);
  const sub = want.agentList.find((a) => a.agent_id);
  assert.equal(sub.nickname, 'Godel');
  const { page, seen } = await open('/#/s/' + encodeURIComponent(CODEX));
  await loaded(page);
  const row = page.locator(`[role=treeitem][data-agent="${sub.agent_id}"]`);
  await row.waitFor();
  assert.equal(await row.locator('.atype').innerText(), 'Godel');
  await row.click();
  const head = page.locator('.ihead h3');
  await head.filter({ hasText: 'Godel' }).waitFor();
  const fields = (await page.locator('.isec').first().innerText()).replace(/\s+/g, ' ');
  assert.match(fields, /\btype default\b/, fields);
  clean(seen);
  await page.close();
});

test('the session list shows a background status whole at every width', async () => {
  const { page, seen } = await open('/#/');
  const pill = page.locator(`[data-session="${BACKGROUND}"] .pill`);
  await pill.waitFor();
  for (const width of [1600, 1440, 1280, 1100, 900, 600, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(100);
    const r = await pill.evaluate((el) => {
      const p = el.getBoundingClientRect(), c = el.parentElement.getBoundingClientRect();
      return { text: el.textContent, left: p.left, right: p.right, cellLeft: c.left, cellRight: c.right, scroll: el.scrollWidth, client: el.clientWidth };
    });
    assert.equal(r.text, 'background');
    assert.ok(r.left >= r.cellLeft - 0.5 && r.right <= r.cellRight + 0.5 && r.scroll <= r.client, `${width} px: the pill is cut: ${JSON.stringify(r)}`);
  }
  clean(seen);
  await page.close();
});

test('events: each happening once, what only a transcript told marked, every raw event behind a control', async () => {
  // The real run's hooks and its transcripts, the hooks of one call lost.
  const events = await all(`/v1/sessions/${TRANSCRIPT}/events`, 'events');
  const copies = events.filter((e) => e.copy === true);
  const theirs = events.filter((e) => e.kind === 'transcript' && !e.copy);
  const also = events.filter((e) => (e.also_read_from || []).includes('transcript'));
  const lost = theirs.filter((e) => e.tool_use_id === TRANSCRIPT_LOST);
  assert.ok(copies.length >= 20 && lost.length === 2 && also.length === copies.length, `the fixture: ${copies.length} copies, ${lost.length} records of the lost call, ${also.length} hook events copied`);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(TRANSCRIPT) + '?tab=events');
  await page.setViewportSize({ width: 1400, height: 3600 });
  await loaded(page);
  const listed = () => page.$$eval('.elist .erow', (rows) => rows.map((r) => Number(r.dataset.seq)).sort((a, b) => a - b));
  const origin = (e) => page.locator(`.elist .erow[data-seq="${e.seq}"] .origin`);
  const once = events.filter((e) => !e.copy).map((e) => e.seq).sort((a, b) => a - b);
  await page.waitForFunction((n) => document.querySelectorAll('.elist .erow').length === n, once.length);
  assert.deepEqual(await listed(), once, 'each happening once');
  for (const e of lost) {
    assert.equal(await origin(e).getAttribute('data-origin'), 'transcript', `${e.event} of the lost call`);
    assert.equal((await origin(e).innerText()).trim(), 'transcript');
  }
  for (const e of also) {
    assert.equal(await origin(e).getAttribute('data-origin'), 'also', `${e.event} ${e.tool_use_id || e.agent_id}`);
    assert.match(await origin(e).getAttribute('title'), /also read from the transcript/i);
  }
  const plain = events.find((e) => e.kind === 'hook' && !e.also_read_from);
  assert.equal(await origin(plain).count(), 0, 'a hook event no file recorded has no mark');

  // Every raw event, the copies marked, and the address keeps the choice.
  await page.getByTestId('raw-events').check();
  await page.waitForURL(/[?&]raw=1(&|$)/);
  await page.waitForFunction((n) => document.querySelectorAll('.elist .erow').length === n, events.length);
  assert.deepEqual(await listed(), events.map((e) => e.seq).sort((a, b) => a - b), 'every raw event');
  for (const e of copies) assert.equal(await origin(e).getAttribute('data-origin'), 'copy', `copy ${e.event}`);
  await page.reload();
  await loaded(page);
  assert.equal(await page.getByTestId('raw-events').isChecked(), true);
  await page.getByTestId('raw-events').uncheck();
  await page.waitForFunction((n) => document.querySelectorAll('.elist .erow').length === n, once.length);
  clean(seen);
  await page.close();
});

test('a session read from the client\'s files alone says so, not "0 events" beside its calls', async () => {
  const sid = newID('f11e5a1d');
  const call = { tool_name: 'Bash', tool_use_id: 'toolu_files_' + Date.now(), tool_input: { command: 'ls' } };
  // What the collector reads of a transcript no hook reported.
  await post([{ ...hookEnv(sid, 1, { hook_event_name: 'UserPromptSubmit', prompt: 'list the files' }), kind: 'transcript' },
    { ...hookEnv(sid, 2, { hook_event_name: 'PreToolUse', ...call }), kind: 'transcript' },
    { ...hookEnv(sid, 3, { hook_event_name: 'PostToolUse', ...call, tool_response: { stdout: 'a' } }), kind: 'transcript' }]);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(sid));
  await loaded(page);
  const fact = page.getByTestId('session-events');
  await page.waitForFunction(() => document.querySelector('[data-testid="session-events"]')?.textContent === 'read from files');
  assert.match(await fact.getAttribute('title'), /read from the client's files/);
  // A session the hooks reported counts their events.
  await page.goto(BASE + '/#/s/' + encodeURIComponent(REAL));
  await loaded(page);
  await page.waitForFunction(() => /^\d[\d,]* events?$/.test(document.querySelector('[data-testid="session-events"]')?.textContent || ''));
  // The list: no 0 beside the calls, and why in the cell's tooltip.
  await page.goto(BASE + '/#/');
  const cell = page.locator(`[data-session="${sid}"] [data-testid="row-events"]`);
  await cell.waitFor();
  assert.equal((await cell.innerText()).trim(), '–');
  assert.match(await cell.getAttribute('title'), /read from the client's files/);
  const real = page.locator(`[data-session="${REAL}"] [data-testid="row-events"]`);
  await real.waitFor();
  assert.match((await real.innerText()).trim(), /^\d[\d,]*$/);
  clean(seen);
  await page.close();
});

test('a hook event on screen is marked +transcript live when the transcript\'s copy arrives', async () => {
  const sid = newID('c0b1e5a1');
  const call = { tool_name: 'Bash', tool_use_id: 'toolu_copied_' + Date.now(), tool_input: { command: 'ls' } };
  await post([hookEnv(sid, 1, { hook_event_name: 'SessionStart', source: 'startup' }),
    hookEnv(sid, 2, { hook_event_name: 'PreToolUse', ...call })]);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(sid) + '?tab=events');
  await loaded(page);
  await liveState(page);
  await page.evaluate(() => { window.__sameDocument = true; });
  const [hook] = (await all(`/v1/sessions/${sid}/events`, 'events')).filter((e) => e.event === 'PreToolUse');
  const row = page.locator(`.elist .erow[data-seq="${hook.seq}"]`);
  await row.waitFor();
  assert.equal(await row.locator('.origin').count(), 0, 'no mark before the transcript told of it');
  // The transcript's record of the same call, as the collector reads it.
  await post([{ ...hookEnv(sid, 3, { hook_event_name: 'PreToolUse', ...call }), kind: 'transcript' }]);
  const t0 = Date.now();
  await row.locator('.origin[data-origin="also"]').waitFor({ timeout: 10000 });
  const latency = Date.now() - t0;
  console.log(`# copy mark latency: ${latency} ms (goal < 1000 ms)`);
  if (latency > 1000) console.log('# WARNING: the mark took longer than one second');
  assert.equal((await row.locator('.origin').innerText()).trim(), '+transcript');
  assert.equal(await page.locator('.elist .erow').count(), 2, 'the copy itself stays hidden');
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no reload');
  clean(seen);
  await page.close();
});

test('the Numbers tab fits its tables in the page', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(PARALLEL) + '?tab=numbers');
  for (const width of [1400, 1000]) {
    await page.setViewportSize({ width, height: 900 });
    await loaded(page);
    await page.getByRole('table', { name: 'agent' }).waitFor();
    const over = await page.evaluate(() => {
      const pane = document.querySelector('.numbers').getBoundingClientRect();
      return [...document.querySelectorAll('.numbers table.stats')].map((t) => {
        const box = t.parentElement.getBoundingClientRect();
        return { label: t.getAttribute('aria-label'), right: box.right, paneRight: pane.right, hidden: t.scrollWidth > t.parentElement.clientWidth && getComputedStyle(t.parentElement).overflowX === 'visible' };
      }).filter((t) => t.right > t.paneRight + 1 || t.hidden);
    });
    assert.deepEqual(over, [], `tables past the page at ${width} px`);
    // The agent table's last column is in view.
    const p95 = await page.getByRole('table', { name: 'agent' }).locator('th', { hasText: /^p95$/ }).boundingBox();
    assert.ok(p95 && p95.x + p95.width <= width, `p95 in view at ${width} px: ${JSON.stringify(p95)}`);
  }
  clean(seen);
  await page.close();
});

test('the Numbers tab of a Codex session gives advice that fits Codex', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(CODEX) + '?tab=numbers');
  await loaded(page);
  const curve = page.getByTestId('curve-none');
  await curve.waitFor();
  assert.match(await curve.innerText(), /Codex tells hooks nothing of its context window/);
  assert.doesNotMatch(await page.locator('.numbers').innerText(), /statusLine command|hookwatch import/);
  clean(seen);
  await page.close();
});

test('the comparison: live on a direct link, and plain words when it cannot compare', async () => {
  const fork = (await api('/v1/sessions/' + encodeURIComponent(REAL))).body.child_session_ids[0];
  const { page, seen } = await open(`/#/compare/${encodeURIComponent(REAL)}/${encodeURIComponent(fork)}`);
  await page.getByTestId('compare-shape').waitFor();
  await liveState(page);
  assert.equal(await page.locator('.live').innerText(), 'live');
  // Unrelated sessions: said so, with a way to compare them anyway.
  await page.goto(`${BASE}/#/compare/${encodeURIComponent(REAL)}/${encodeURIComponent(PARALLEL)}`);
  const err = page.getByTestId('compare-error');
  await err.waitFor();
  const words = await page.getByTestId('compare').innerText();
  assert.match(words, /share no baseline/);
  assert.doesNotMatch(words, /\/v1\/|unrelated=1|\b409\b/, 'no API path or status: ' + words);
  seen.console = seen.console.filter((m) => !/409 \(Conflict\)/.test(m)); // the refusal, as the browser logs it
  assert.equal(await page.getByRole('link', { name: 'Compare them anyway' }).count(), 1);
  // A session with itself.
  await page.goto(`${BASE}/#/compare/${encodeURIComponent(REAL)}/${encodeURIComponent(REAL)}`);
  await page.getByTestId('compare-error').filter({ hasText: /same session/ }).waitFor();
  assert.doesNotMatch(await page.getByTestId('compare').innerText(), /\/v1\/|\b400\b/);
  clean(seen);
  await page.close();
});

test('a running session with no event for an hour or more reads idle, and still filters as running', async () => {
  const sid = '1d1e0000-0000-4000-8000-' + String(Date.now()).slice(-12).padStart(12, '0');
  const t0 = Date.now() - 49 * 86400e3 - 3600e3;
  const env = (n, ms, payload) => ({ id: `idle-${sid}-${n}`, runtime: 'claude-code', kind: 'hook', received_at: new Date(t0 + ms).toISOString(),
    payload: { session_id: sid, cwd: '/home/dev/src/idle', transcript_path: '/t.jsonl', ...payload } });
  await post([env(1, 0, { hook_event_name: 'SessionStart', source: 'startup' }), env(2, 1000, { hook_event_name: 'UserPromptSubmit', prompt: 'left open' })]);
  const want = (await api('/v1/sessions/' + sid)).body;
  assert.equal(want.status, 'running', 'the collector has no end of it');
  const { page, seen } = await open('/#/?status=running');
  const pill = page.locator(`[data-session="${sid}"] .pill`);
  await pill.waitFor();
  assert.equal(await pill.innerText(), 'idle 49d');
  assert.equal(await pill.getAttribute('data-status'), 'running');
  assert.match(await pill.getAttribute('title'), /^running as the collector has it \(no end event\), but no event for 49d/);
  assert.match(await page.getByLabel('Status', { exact: true }).locator('option[value=running]').innerText(), /running \([\d,]+, [\d,]+ idle\)/);
  // A session at work is not idle.
  const busy = page.locator('.srow.st-running .pill:not(.pill-idle)').first();
  await busy.waitFor();
  assert.equal(await busy.innerText(), 'running');
  await page.goto(BASE + '/#/s/' + sid);
  await page.getByTestId('session-status').filter({ hasText: /^idle 49d$/ }).waitFor();
  clean(seen);
  await page.close();
});

test('a search that matches no session says so', async () => {
  const { page, seen } = await open('/#/?q=zzzznomatch');
  const none = page.getByTestId('no-match');
  await none.waitFor();
  assert.match(await none.innerText(), /No session matches “zzzznomatch”/);
  await none.getByRole('button', { name: 'Clear the filters' }).click();
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  assert.equal(await page.getByLabel('Search sessions').inputValue(), '');
  assert.equal(await none.count(), 0);
  clean(seen);
  await page.close();
});

test('narrow screens: the list and the filters fit, and the details can be closed on a phone', async () => {
  // A project named by a long directory, which the project filter offers.
  const long = newID('c0ffee06');
  await post([{ ...hookEnv(long, 0, { hook_event_name: 'SessionStart', source: 'startup' }),
    payload: { session_id: long, cwd: '/home/dev/src/' + 'a-very-long-directory-name-'.repeat(6), hook_event_name: 'SessionStart', source: 'startup' } }]);
  const { page, seen } = await open('/#/');
  await page.setViewportSize({ width: 800, height: 800 });
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  await page.locator(`[data-session="${long}"]`).waitFor();
  const fits = (sel) => page.$$eval(sel, (els) => els.filter((e) => getComputedStyle(e).display !== 'none')
    .map((e) => ({ sel: e.className || e.tagName, right: Math.round(e.getBoundingClientRect().right) })).filter((r) => r.right > innerWidth));
  assert.deepEqual(await fits('.toolbar > *'), [], 'the list toolbar at 800 px');
  assert.deepEqual(await page.evaluate(() => { const l = document.querySelector('.slist'); return l.scrollWidth - l.clientWidth; }), 0, 'the list scrolls sideways at 800 px');
  assert.deepEqual(await page.evaluate(() => document.documentElement.scrollWidth - innerWidth), 0, 'the page scrolls sideways at 800 px');
  await page.setViewportSize({ width: 390, height: 800 });
  assert.deepEqual(await fits('.toolbar > *'), [], 'the list toolbar at 390 px');
  await page.setViewportSize({ width: 800, height: 800 });
  await page.goto(BASE + '/#/s/' + encodeURIComponent(REAL));
  await loaded(page);
  assert.deepEqual(await fits('.tabs > *, .filters > *'), [], 'the tabs and filters at 800 px');
  // On a phone the details of a call lie over the timeline, closable.
  await page.setViewportSize({ width: 390, height: 800 });
  await page.goto(BASE + '/#/s/' + encodeURIComponent(REAL) + '?call=toolu_00000009');
  await loaded(page);
  const insp = page.getByTestId('inspector');
  await insp.waitFor();
  const box = await insp.boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, 'the inspector in the viewport: ' + JSON.stringify(box));
  const close = await insp.getByRole('button', { name: 'Close details' }).boundingBox();
  assert.ok(close.x >= 0 && close.x + close.width <= 390, 'its close button in the viewport: ' + JSON.stringify(close));
  await insp.getByRole('button', { name: 'Close details' }).click();
  await insp.waitFor({ state: 'detached' });
  clean(seen);
  await page.close();
});

test('the keyboard: events open with Enter, and closing the details gives the focus back', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL) + '?tab=events');
  await loaded(page);
  const first = page.locator('.erow').first();
  await first.focus();
  await page.keyboard.press('ArrowDown');
  const seq = await page.evaluate(() => document.activeElement.dataset.seq);
  assert.ok(seq, 'arrow down moves to the next event');
  await page.keyboard.press('Enter');
  const insp = page.getByTestId('inspector');
  await insp.waitFor();
  await page.waitForURL(/tab=events/);
  // Into the details, then out with Esc: back on the row.
  await insp.getByRole('button', { name: 'Close details' }).focus();
  await page.keyboard.press('Escape');
  await insp.waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement.dataset.seq), seq, 'focus back on the event that opened the details');
  // An agent opened from the tree, closed from inside the details.
  await page.getByRole('tab', { name: 'Timeline' }).click();
  const agent = page.locator('[role=treeitem]').nth(1);
  const id = await agent.getAttribute('data-agent');
  await agent.focus();
  await page.keyboard.press('Enter');
  await insp.waitFor();
  await insp.getByRole('button', { name: 'Show only this agent' }).focus();
  await page.keyboard.press('Escape');
  await insp.waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('data-agent')), id, 'focus back on the agent');
  // The tree's arrows go from agent to agent.
  const ids = await page.locator('[role=treeitem]').evaluateAll((els) => els.map((e) => e.dataset.agent));
  const focused = () => page.evaluate(() => document.activeElement.getAttribute('data-agent'));
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(), ids[2], 'arrow down to the next agent');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  assert.equal(await focused(), ids[0], 'arrow up to the previous agent');
  await page.keyboard.press('End');
  assert.equal(await focused(), ids[ids.length - 1], 'End to the last agent');
  // The tabs': one stop of the Tab key, the arrows move and show.
  const tabs = page.getByRole('tab');
  assert.deepEqual(await tabs.evaluateAll((els) => els.map((e) => e.tabIndex)), await tabs.evaluateAll((els) => els.map((e) => (e.getAttribute('aria-selected') === 'true' ? 0 : -1))));
  await page.getByRole('tab', { name: 'Timeline' }).focus();
  await page.keyboard.press('ArrowRight');
  const second = await tabs.nth(1).innerText();
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-selected')), 'true', 'the focused tab is shown');
  assert.equal(await page.evaluate(() => document.activeElement.innerText), second);
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await page.evaluate(() => document.activeElement.innerText), await tabs.last().innerText(), 'left from the first tab to the last');
  await page.keyboard.press('Home');
  assert.equal(await page.getByRole('tab', { name: 'Timeline' }).getAttribute('aria-selected'), 'true');
  clean(seen);
  await page.close();
});

test('the keyboard: the timeline\'s arrows go from call to call, Enter opens the one highlighted', async () => {
  const want = await expected(REAL);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL));
  await loaded(page);
  const canvas = page.locator('.tl-canvas');
  const said = page.getByTestId('timeline-said');
  const highlighted = () => page.evaluate(() => window.__hw.timeline.highlighted());
  const call = (id) => want.toolCalls.find((c) => c.tool_use_id === id);
  const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // The Tab key reaches the timeline, after the agent tree (and the
  // buttons of its lanes).
  await page.locator('[role=treeitem]').last().focus();
  for (let i = 0; i < 4 && await page.evaluate(() => document.activeElement.className) !== 'tl-canvas'; i++) await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.className), 'tl-canvas', 'Tab goes from the tree to the timeline');
  assert.equal(await highlighted(), null);
  // The first key highlights the first call in view, of the main agent's lane.
  await page.keyboard.press('ArrowRight');
  const first = await highlighted();
  assert.ok(want.calls.get('').has(first), 'a call of the main agent: ' + first);
  assert.match(await said.innerText(), new RegExp(`^${esc(call(first).tool_name)}, .*main agent.*call 1 of ${want.calls.get('').size} in its lane; Enter opens it$`));
  // The arrows walk the lane in time, to its every call; End is its last.
  const seenIDs = [first];
  for (let i = 1; i < want.calls.get('').size; i++) {
    await page.keyboard.press('ArrowRight');
    seenIDs.push(await highlighted());
  }
  assert.deepEqual(new Set(seenIDs), want.calls.get(''), 'ArrowRight reaches every call of the lane, once each');
  const starts = seenIDs.map((id) => Date.parse(call(id).started_at));
  assert.deepEqual(starts, [...starts].sort((a, b) => a - b), 'in the order they started');
  await page.keyboard.press('ArrowRight');
  assert.equal(await highlighted(), seenIDs[seenIDs.length - 1], 'the last call stays highlighted');
  await page.keyboard.press('Home');
  assert.equal(await highlighted(), first, 'Home: the lane\'s first call');
  await page.keyboard.press('End');
  assert.equal(await highlighted(), seenIDs[seenIDs.length - 1], 'End: the lane\'s last call');
  // Down to the next lane with calls, a subagent's.
  await page.keyboard.press('ArrowDown');
  const sub = await highlighted();
  assert.ok(call(sub).agent_id, 'ArrowDown goes to a subagent\'s call: ' + sub);
  assert.match(await said.innerText(), new RegExp(`^${esc(call(sub).tool_name)}, .* agent ${call(sub).agent_id.slice(0, 7)}`));
  await page.keyboard.press('ArrowUp');
  assert.equal(call(await highlighted()).agent_id, '', 'ArrowUp goes back to the main agent\'s lane');
  await page.keyboard.press('ArrowDown');
  const opened = await highlighted();
  assert.ok(call(opened).agent_id, 'ArrowDown again: a subagent\'s call, ' + opened);
  // The highlighted call is drawn in view, its tip shown.
  const rect = await page.evaluate((id) => window.__hw.timeline.rectOf(id), opened);
  const box = await canvas.boundingBox();
  assert.ok(rect && rect.x + rect.w >= box.x && rect.x <= box.x + box.width, 'the call is in view: ' + JSON.stringify({ rect, box }));
  assert.match(await page.locator('.tip').innerText(), new RegExp(esc(call(opened).tool_name)));
  // Enter opens it; Escape closes it, the focus back on the timeline.
  await page.keyboard.press('Enter');
  const insp = page.getByTestId('inspector');
  await insp.waitFor();
  assert.ok((await insp.innerText()).includes(opened), 'the details of the call highlighted');
  await page.waitForURL(new RegExp('call=' + encodeURIComponent(opened)));
  await insp.getByRole('button', { name: 'Close details' }).focus();
  await page.keyboard.press('Escape');
  await insp.waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement.className), 'tl-canvas', 'focus back on the timeline');
  assert.equal(await highlighted(), opened, 'the call opened stays highlighted');
  await page.keyboard.press('ArrowUp');
  assert.equal(call(await highlighted()).agent_id, '', 'the keys go on from the call opened');
  // A filter narrows the calls the keys reach to those it shows: the
  // highlighted call, hidden, gives way to the first shown.
  const failed = want.toolCalls.filter((c) => c.agent_id === '' && c.status === 'error').map((c) => c.tool_use_id);
  assert.ok(failed.length > 0, 'the capture has a failed call of the main agent');
  await page.getByLabel('Status', { exact: true }).selectOption('error');
  await canvas.focus();
  const reached = new Set();
  for (let i = 0; i <= failed.length; i++) {
    await page.keyboard.press(i ? 'ArrowRight' : 'Home');
    reached.add(await highlighted());
  }
  assert.deepEqual(reached, new Set(failed), 'only the failed calls');
  clean(seen);
  await page.close();
});

/** openLinked opens a session by a link that selects one of its calls; it returns the inspector too. */
async function openLinked(session, call) {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(session) + '?call=' + encodeURIComponent(call));
  await loaded(page);
  const insp = page.getByTestId('inspector');
  await insp.waitFor();
  return { page, seen, insp };
}

test('a call or an agent the session ended without an outcome or a stop of reads so, and a call ends where its agent was last seen', async () => {
  const sid = '0dd0c0de-0000-4000-8000-' + String(Date.now()).slice(-12).padStart(12, '0');
  const t0 = Date.now() - 10 * 60e3;
  const base = { session_id: sid, cwd: '/home/dev/src/nooutcome', transcript_path: '/t.jsonl' };
  const env = (n, ms, payload) => ({ id: `nooutcome-${sid}-${n}`, runtime: 'claude-code', kind: 'hook', received_at: new Date(t0 + ms).toISOString(), payload: { ...base, ...payload } });
  const call = (id, ev, extra) => ({ hook_event_name: ev, tool_name: 'Bash', tool_use_id: id, tool_input: { command: 'sleep 600' }, prompt_id: 'p1', ...extra });
  await post([
    env(1, 0, { hook_event_name: 'SessionStart', source: 'startup' }),
    env(2, 1000, { hook_event_name: 'UserPromptSubmit', prompt: 'wait', prompt_id: 'p1' }),
    env(3, 2000, call('toolu_lost', 'PreToolUse')),
    env(4, 3000, call('toolu_done', 'PreToolUse')),
    env(5, 4000, call('toolu_done', 'PostToolUse', { tool_response: { stdout: '' }, duration_ms: 1000 })),
    env(6, 2500, { hook_event_name: 'SubagentStart', agent_id: 'a0000000000000dd1', agent_type: 'Explore' }),
    env(8, 2600, call('toolu_sub_lost', 'PreToolUse', { agent_id: 'a0000000000000dd1', agent_type: 'Explore' })),
    env(9, 4500, { hook_event_name: 'SubagentStop', agent_id: 'a0000000000000dd1', agent_type: 'Explore', prompt_id: 'p1' }),
    // A subagent the session ended without a stop of.
    env(11, 4600, { hook_event_name: 'SubagentStart', agent_id: 'a0000000000000dd2', agent_type: 'Plan' }),
    env(10, 5000, { hook_event_name: 'Stop', prompt_id: 'p1' }),
    env(7, 90000, { hook_event_name: 'SessionEnd', reason: 'other' }),
  ]);
  const want = await expected(sid);
  assert.equal(want.session.status, 'ended');
  const lost = want.toolCalls.find((c) => c.tool_use_id === 'toolu_lost');
  assert.equal(lost.status, 'pending', 'the model keeps the call pending');
  const main = want.agentList.find((a) => a.agent_id === '');
  const { page, seen, insp } = await openLinked(sid, 'toolu_lost');
  assert.equal(await insp.getByTestId('call-status').innerText(), 'no outcome reported');
  assert.match(await insp.innerText(), /ended\s+no outcome reported/);
  assert.match(await insp.innerText(), /session ended before the call's outcome was reported/);
  assert.equal(await page.getByTestId('no-outcome').innerText(), '2 without outcome');
  // A bar stops where its agent was last seen (its stop), else at the session's end.
  const ends = await page.evaluate(() => { const m = window.__hw.model; return ['toolu_lost', 'toolu_sub_lost'].map((id) => m.callEnd(m.calls.get(id))); });
  const stop = (a, c) => (a.stopped_at && Date.parse(a.stopped_at) >= Date.parse(c.started_at) ? Math.min(Date.parse(a.stopped_at), Date.parse(want.session.ended_at)) : Date.parse(want.session.ended_at));
  const sub = want.agentList.find((a) => a.agent_id === 'a0000000000000dd1');
  const subLost = want.toolCalls.find((c) => c.tool_use_id === 'toolu_sub_lost');
  assert.equal(subLost.status, 'pending');
  assert.deepEqual(ends, [stop(main, lost), stop(sub, subLost)]);
  assert.ok(ends[1] < Date.parse(want.session.ended_at), 'the subagent stopped before the session ended: ' + sub.stopped_at);
  const rect = await page.evaluate(() => window.__hw.timeline.rectOf('toolu_lost'));
  await page.mouse.move(rect.x + rect.w / 2, rect.y + rect.h / 2);
  assert.equal(await page.getByTestId('tip-status').innerText(), 'no outcome reported');
  // An agent the session ended without a stop of no longer reads as running.
  assert.equal(want.agentList.find((a) => a.agent_id === 'a0000000000000dd2').stopped_at, null);
  await page.locator('[role=treeitem][data-agent="a0000000000000dd2"]').click();
  await insp.getByText('a0000000000000dd2').waitFor();
  assert.match(await insp.innerText(), /stopped\s+no stop reported/);
  await page.locator('[role=treeitem][data-agent="a0000000000000dd1"]').click();
  await insp.getByText('a0000000000000dd1').waitFor();
  assert.match(await insp.innerText(), /stopped\s+\d{4}-/);
  // The status filter stays the model's.
  await page.getByLabel('Status', { exact: true }).selectOption('pending');
  await page.getByRole('tab', { name: 'Events' }).click();
  assert.match(await page.locator('.erow').first().innerText(), /no outcome/);
  clean(seen);
  await page.close();
});

test('calls a lane has no row for show as +N where they are, and open every row', async () => {
  const sid = '5ace0000-0000-4000-8000-' + String(Date.now()).slice(-12).padStart(12, '0');
  const t0 = Date.now() - 5 * 60e3;
  const N = 12;
  const env = (n, ms, payload) => ({ id: `rows-${sid}-${n}`, runtime: 'claude-code', kind: 'hook', received_at: new Date(t0 + ms).toISOString(),
    payload: { session_id: sid, cwd: '/home/dev/src/rows', transcript_path: '/t.jsonl', ...payload } });
  const call = (i, ev) => ({ hook_event_name: ev, tool_name: 'Read', tool_use_id: `toolu_par_${String(i).padStart(2, '0')}`, tool_input: { file_path: `/src/f${i}.go` }, ...(ev === 'PostToolUse' ? { tool_response: {}, duration_ms: 20000 } : {}) });
  const envs = [env(0, 0, { hook_event_name: 'SessionStart', source: 'startup' })];
  for (let i = 0; i < N; i++) envs.push(env(1 + i, 1000 + i * 100, call(i, 'PreToolUse')));
  for (let i = 0; i < N; i++) envs.push(env(100 + i, 21000 + i * 100, call(i, 'PostToolUse')));
  await post(envs);
  const { page, seen } = await open('/#/s/' + sid);
  await loaded(page);
  let lane = (await page.evaluate(() => window.__hw.timeline.lanes()))[0];
  assert.deepEqual([lane.rows, lane.stacked], [4, N - 4]);
  const row = page.locator('[role=treeitem][data-agent=""]');
  assert.equal(await row.getByTestId('lane-rows').innerText(), '+' + (N - 4));
  const [mark] = await page.evaluate(() => window.__hw.timeline.overflowRects(''));
  assert.equal(mark.n, N - 4);
  await page.mouse.move(mark.x + mark.w / 2, mark.y + mark.h / 2);
  await page.locator('.tip').filter({ hasText: `${N - 4} more calls` }).waitFor();
  await page.mouse.click(mark.x + mark.w / 2, mark.y + mark.h / 2);
  await page.waitForFunction((n) => window.__hw.timeline.lanes()[0].rows === n, N);
  lane = (await page.evaluate(() => window.__hw.timeline.lanes()))[0];
  assert.equal(lane.stacked, 0);
  assert.equal(await page.getByTestId('inspector').count(), 0, 'the mark selects nothing');
  // Every call is reachable: the last one, stacked before, opens on a click.
  const last = `toolu_par_${String(N - 1).padStart(2, '0')}`;
  const r = await page.evaluate((id) => window.__hw.timeline.rectOf(id), last);
  await page.mouse.click(r.x + Math.min(r.w / 2, 20), r.y + r.h / 2);
  await page.waitForURL(new RegExp('call=' + last));
  // The tree's button folds the lane again.
  await row.getByTestId('lane-rows').filter({ hasText: 'fewer rows' }).click();
  await page.waitForFunction(() => window.__hw.timeline.lanes()[0].rows === 4);
  clean(seen);
  await page.close();
});

test('long agent ids and types keep to one line in the agent tree, whole in their tooltips', async () => {
  const sid = '10ad0000-0000-4000-8000-' + String(Date.now()).slice(-12).padStart(12, '0');
  const t0 = Date.now() - 5 * 60e3;
  const env = (n, ms, payload) => ({ id: `long-${sid}-${n}`, runtime: 'claude-code', kind: 'hook', received_at: new Date(t0 + ms).toISOString(),
    payload: { session_id: sid, cwd: '/home/dev/src/long', transcript_path: '/t.jsonl', ...payload } });
  const A = 'a 1 b 2 c 3 researcher of the quarterly billing report', B = 'nested reviewer of the researcher findings', T = 'plugin-reports:deep-research-agent-with-a-long-type';
  const as = (id) => ({ agent_id: id, agent_type: T });
  const spawn = (id, ev, who) => ({ hook_event_name: ev, tool_name: 'Agent', tool_use_id: id, tool_input: { description: 'research the quarterly billing numbers in depth' }, ...(who ? as(who) : {}), ...(ev === 'PostToolUse' ? { tool_response: {} } : {}) });
  await post([
    env(0, 0, { hook_event_name: 'SessionStart', source: 'startup' }),
    env(1, 100, spawn('toolu_sp1', 'PreToolUse')),
    env(2, 200, { hook_event_name: 'SubagentStart', ...as(A) }),
    env(3, 300, spawn('toolu_sp2', 'PreToolUse', A)),
    env(4, 400, { hook_event_name: 'SubagentStart', ...as(B) }),
    env(5, 500, { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: 'toolu_fail', tool_input: { command: 'false' }, ...as(B) }),
    env(6, 600, { hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_use_id: 'toolu_fail', tool_input: { command: 'false' }, error: 'exit 1', ...as(B) }),
    env(7, 700, { hook_event_name: 'SubagentStop', ...as(B) }),
    env(8, 800, spawn('toolu_sp2', 'PostToolUse', A)),
    env(9, 900, { hook_event_name: 'SubagentStop', ...as(A) }),
    env(10, 1000, spawn('toolu_sp1', 'PostToolUse')),
  ]);
  const { page, seen } = await open('/#/s/' + sid);
  await loaded(page);
  await page.locator('[role=treeitem]').nth(2).waitFor();
  for (const width of [1440, 700]) {
    await page.setViewportSize({ width, height: 800 });
    await page.waitForTimeout(100);
    const rows = await page.$$eval('[role=treeitem]', (els) => els.map((el) => {
      const box = el.getBoundingClientRect();
      const line = (sel) => { const e = el.querySelector(sel); const r = e.getBoundingClientRect(); return { h: r.height, top: r.top - box.top, bottom: r.bottom - box.top, lh: parseFloat(getComputedStyle(e).lineHeight) || 16 }; };
      const aid = el.querySelector('.aid');
      return { id: el.dataset.agent, h: box.height, a1: line('.a1'), a2: line('.a2'), aid: aid ? aid.title : '', type: el.querySelector('.atype').title, meta: el.querySelector('.a2').title };
    }));
    for (const r of rows) {
      assert.ok(r.a1.h <= 20, `${width}px: the first line of ${r.id} is one line: ${JSON.stringify(r.a1)}`);
      assert.ok(r.a2.h <= 16 && r.a2.top >= 0 && r.a2.bottom <= r.h, `${width}px: the meta line of ${r.id} is whole in its row: ${JSON.stringify(r)}`);
      if (r.id) {
        assert.equal(r.aid, r.id, 'the whole id in the tooltip');
        assert.equal(r.type, T);
        assert.match(r.meta, /^1 call · \d+ ms/, 'the whole meta line in the tooltip');
      }
    }
  }
  clean(seen);
  await page.close();
});

test('agent names stay readable in the tree at a phone\'s width, and whole on a wide screen', async () => {
  // The capture's agents (general-purpose, Explore, the compaction agent,
  // a failure badge), a session's background subagents, nested, and the
  // demo's, whose background general-purpose subagent has a denied call:
  // its name, two badges and its id on one line.
  for (const sid of [REAL, BACKGROUND, STORY]) {
    const { page, seen } = await open('/#/s/' + encodeURIComponent(sid));
    await loaded(page);
    for (const width of [1440, 420]) {
      await page.setViewportSize({ width, height: 800 });
      await page.waitForTimeout(100);
      const rows = await page.$$eval('[role=treeitem]', (els) => els.map((el) => {
        const box = el.getBoundingClientRect();
        const name = el.querySelector('.atype');
        const nb = name.getBoundingClientRect();
        const aid = el.querySelector('.aid');
        // The text's own width, fractions of a pixel included: a name cut
        // by a sliver is drawn with an ellipsis all the same.
        const range = document.createRange();
        range.selectNodeContents(name);
        const text = range.getBoundingClientRect().width;
        const parts = [...el.querySelector('.a1').children].map((e) => ({ cls: e.className, r: e.getBoundingClientRect() }))
          .filter((p) => p.r.width > 0).map((p) => ({ cls: p.cls, left: p.r.left, right: p.r.right }));
        return { id: el.dataset.agent, right: box.right, name: name.textContent, title: name.title, rowTitle: el.title, shown: nb.width, whole: name.scrollWidth, nameRight: nb.right,
          text, aidShown: aid ? aid.getBoundingClientRect().width : 0, badges: el.querySelectorAll('.a1 > .badge').length, parts };
      }));
      assert.ok(rows.length >= 3, 'the session has subagents');
      if (sid === STORY) assert.ok(rows.some((r) => r.badges >= 2 && r.name === 'general-purpose'), 'the demo has a general-purpose subagent with two badges: ' + JSON.stringify(rows));
      for (const r of rows) {
        const at = `${width} px, ${r.name} ${r.id}: ${JSON.stringify(r)}`;
        assert.equal(r.title, r.name, 'the whole name in its tooltip: ' + at);
        if (r.id) assert.equal(r.rowTitle, 'agent ' + r.id, 'the whole id in the row\'s tooltip: ' + at);
        // The id gives way first: a name cut beside an id still shown is a
        // name that lost to the id.
        if (r.text > r.shown + 0.05) assert.ok(r.aidShown === 0, 'the id shrinks to nothing before the name is cut: ' + at);
        if (width >= 1000) assert.ok(r.whole <= r.shown + 0.5 && r.text <= r.shown + 0.05, 'the name whole: ' + at);
        // At least ten characters of the name (or all of it), whatever the badges and the id beside.
        else assert.ok(r.shown + 0.5 >= Math.min(r.whole, 70), 'the name readable: ' + at);
        for (const [i, p] of r.parts.entries()) {
          assert.ok(p.right <= r.right + 0.5, 'nothing on the first line cut by the row\'s edge: ' + at);
          if (i > 0) assert.ok(p.left >= r.parts[i - 1].right - 0.5, 'nothing on the first line over another: ' + at);
        }
      }
    }
    clean(seen);
    await page.close();
  }
});

test('a call shows its meaning: subtype, effect, the steps of its command, the files it touched and who else did', async () => {
  let { page, seen, insp } = await openLinked(REAL, 'toolu_00000009'); // Bash `go vet ./... 2>&1; exit 3`
  const text = await insp.innerText();
  for (const want of ['run_lint', 'execute_check', 'importance normal']) {
    assert.ok(text.includes(want), `inspector shows ${want}:\n${text}`);
  }
  const steps = await insp.getByTestId('command-steps').innerText();
  assert.match(steps, /2 steps/i);
  assert.match(steps, /go\s+vet \.\/\.\.\.\s+execute_check/);
  clean(seen);
  await page.close();
  // 2.1.332: `echo hello > notes.txt` wrote the file four subagents read.
  ({ page, seen, insp } = await openLinked(RESUMED, 'toolu_00000002'));
  const files = await insp.getByTestId('call-files').innerText();
  assert.match(files, /writes\s+\/home\/dev\/src\/demo\/notes\.txt/);
  assert.equal((files.match(/Read toolu_/g) || []).length, 4, files);
  // The subtype and effect filters come from the URL and keep only those calls.
  await page.goto(BASE + '/#/s/' + encodeURIComponent(RESUMED) + '?effect=write');
  await loaded(page);
  const effect = page.getByLabel('Effect', { exact: true });
  assert.equal(await selectedOnceOffered(page, 'Effect', 'write'), 'write');
  // The effect filter offers the effects the collector gave the calls,
  // harmless first.
  const rank = ['read_only', 'execute_check', 'network', 'write', 'destructive'];
  const effects = [...new Set((await all(`/v1/sessions/${RESUMED}/tool-calls`, 'tool_calls')).map((c) => c.effect).filter(Boolean))];
  const offered = await effect.locator('option').evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
  assert.deepEqual(offered, effects.sort((a, b) => rank.indexOf(a) - rank.indexOf(b)));
  assert.ok(offered.length >= 2, `effects offered: ${offered}`);
  await page.getByRole('tab', { name: 'Events' }).click();
  const list = page.getByRole('list', { name: 'Events' });
  await list.waitFor();
  // The Bash call that wrote: its PreToolUse and PostToolUse, nothing else.
  const writes = (await all(`/v1/sessions/${RESUMED}/tool-calls?effect=write`, 'tool_calls')).map((c) => c.tool_use_id);
  assert.deepEqual(writes, ['toolu_00000002']);
  assert.equal(+(await list.getAttribute('data-count')), 2);
  clean(seen);
  await page.close();
});

test('archives: the session lists the transcripts archived when it compacted', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL));
  await loaded(page);
  const list = page.getByTestId('archives');
  await list.waitFor();
  const text = await list.innerText();
  assert.match(text, /1 compaction archive/);
  assert.match(text, /main agent/);
  assert.match(text, /summary kept/);
  clean(seen);
  await page.close();
});

test('signals: a loop of failing calls shows on the session, the agent and its details', async () => {
  // 2.1.332: the main agent ran `echo failing; exit 4` twice; the link
  // lowers the threshold to two.
  const { page, seen } = await open('/#/s/' + encodeURIComponent(RESUMED) + '?failed_repeats=2');
  await loaded(page);
  const list = page.getByTestId('signals');
  await list.waitFor();
  const text = await list.innerText();
  assert.match(text, /1 signal/);
  assert.match(text, /loop main: Bash echo failing; exit 4 failed 2 times/);
  const badge = page.locator('[data-agent=""] [data-testid=agent-signals]');
  assert.equal((await badge.innerText()).trim(), '⚠ 1');
  await list.getByRole('button', { name: /^main/ }).click();
  const insp = page.getByTestId('inspector');
  assert.match(await insp.getByTestId('agent-signal-list').innerText(), /failed 2 times/);
  clean(seen);
  await page.close();
  // At the collector's thresholds, none.
  const plain = await open('/#/s/' + encodeURIComponent(RESUMED));
  await loaded(plain.page);
  await plain.page.waitForFunction(() => window.__hw.model && window.__hw.model.signals.size > 0);
  assert.equal(await plain.page.getByTestId('signals').count(), 0);
  assert.equal(await plain.page.locator('[data-testid=agent-signals]').count(), 0);
  clean(plain.seen);
  await plain.page.close();
});

test('signals: the keyboard folds a long list of signals away and goes on to the views', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(RESUMED) + '?failed_repeats=2');
  await loaded(page);
  const list = page.getByTestId('signals');
  await list.getByRole('button', { name: /^main/ }).waitFor();
  await list.locator('summary').focus();
  await page.keyboard.press('Enter');
  await list.getByRole('button', { name: /^main/ }).waitFor({ state: 'hidden' });
  assert.match(await list.innerText(), /1 signal/, 'the count stays in sight');
  // The archives' links come next, then the views.
  let tab = false;
  for (let i = 0; i < 10 && !tab; i++) {
    await page.keyboard.press('Tab');
    tab = await page.evaluate(() => document.activeElement?.getAttribute('role') === 'tab');
  }
  assert.ok(tab, 'Tab reaches the views past the folded signals');
  // Folded, it stays folded while the view draws again.
  await page.getByLabel('Status', { exact: true }).selectOption('error');
  assert.equal(await list.evaluate((d) => d.open), false);
  clean(seen);
  await page.close();
});

test('signals: Back returns from what a signal opened to where the user was', async () => {
  const { page, seen } = await open('/#/');
  await page.locator(`[data-session="${REAL}"]`).waitFor();
  await page.evaluate((id) => { location.hash = '#/s/' + encodeURIComponent(id) + '?failed_repeats=2'; }, RESUMED);
  await loaded(page);
  const list = page.getByTestId('signals');
  await list.waitFor();
  const insp = page.getByTestId('inspector');
  // A call the signal names, then its agent.
  await list.locator('button.mono').first().click();
  await page.waitForURL(/[?&]call=/);
  const call = decodeURIComponent(/[?&]call=([^&]+)/.exec(new URL(page.url()).hash)[1]);
  const shows = () => insp.locator('code', { hasText: new RegExp('^' + call + '$') }).waitFor();
  await shows();
  await list.getByRole('button', { name: /^main/ }).click();
  await page.waitForURL(/[?&]inspect=main(&|$)/);
  await insp.locator('h3', { hasText: 'main' }).waitFor();
  // Back: the call, the session as it was opened, the list.
  await page.goBack();
  await page.waitForURL(/[?&]call=/);
  await shows();
  await page.goBack();
  await page.waitForURL((u) => u.hash.includes('failed_repeats=2') && !u.hash.includes('call=') && !u.hash.includes('inspect='));
  await insp.waitFor({ state: 'detached' });
  await page.goBack();
  await page.waitForURL(/#\/$/);
  await page.locator(`[data-session="${REAL}"]`).waitFor();
  clean(seen);
  await page.close();
});

test('signals: an outlier subagent and a stalled session show on the session and the agent', async () => {
  // Three Explore subagents of the 2.1.197 capture's payloads; the second
  // made 24 calls against its siblings' 3 and 2.
  const { page, seen } = await open('/#/s/' + encodeURIComponent(OUTLIER));
  await loaded(page);
  const list = page.getByTestId('signals');
  await list.waitFor();
  const text = await list.innerText();
  assert.match(text, /1 signal/);
  assert.match(text, /outlier Explore .*: Explore made 24 calls, 9\.6× the median of its 2 stopped siblings \(2\.5\)/);
  assert.equal((await page.locator(`[data-agent="${OUTLIER_AGENT}"] [data-testid=agent-signals]`).innerText()).trim(), '⚠ 1');
  assert.equal(await page.locator('[data-testid=agent-signals]').count(), 1, 'only the outlier has a badge');
  clean(seen);
  await page.close();

  // A call started ten minutes ago, nothing since: stalled, on the main agent.
  const stalled = await open('/#/s/' + encodeURIComponent(STALLED));
  await loaded(stalled.page);
  const slist = stalled.page.getByTestId('signals');
  await slist.waitFor();
  assert.match(await slist.innerText(), /stalled main: no event for (9|[1-9]\d)m\d+s; Bash go vet/);
  assert.equal((await stalled.page.locator('[data-agent=""] [data-testid=agent-signals]').innerText()).trim(), '⚠ 1');
  clean(stalled.seen);
  await stalled.page.close();
});

test('signals: a session that stalls while it is shown says so without a reload', async () => {
  // The real capture's start, prompt and go vet under a new session, the
  // call started 15 s short of the collector's 5 minutes.
  const events = await all(`/v1/sessions/${REAL}/events`, 'events');
  const payload = (name, id) => events.map((e) => e.envelope?.payload).find((p) => p?.hook_event_name === name && (!id || p.tool_use_id === id));
  const sid = '57a11ed1-0000-4000-8000-' + String(Date.now()).slice(-12).padStart(12, '0');
  const start = Date.now() - 5 * 60 * 1000 + 15000;
  const env = (n, p) => ({ id: `stall-${sid}-${n}`, runtime: 'claude-code', kind: 'hook', received_at: new Date(start - (2 - n) * 1000).toISOString(), payload: { ...p, session_id: sid } });
  await post([env(0, payload('SessionStart')), env(1, payload('UserPromptSubmit')), env(2, payload('PreToolUse', 'toolu_00000009'))]);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(sid));
  await loaded(page);
  await page.waitForFunction(() => document.querySelector('.live')?.dataset.state === 'live');
  await page.evaluate(() => { window.__sameDocument = true; });
  await page.getByTestId('signals').filter({ hasText: /stalled main/ }).waitFor({ timeout: 60000 });
  assert.ok(await page.evaluate(() => window.__hw.signalNotices >= 1), 'the stream told the stall');
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no reload');
  clean(seen);
  await page.close();
});

test('a selected call is in the URL, and the URL selects it', async () => {
  const { page, seen, insp } = await openLinked(REAL, 'toolu_00000009');
  assert.match(await insp.innerText(), /go vet \.\/\.\.\./, 'the linked call is selected');
  // Shown on the timeline: zoomed to it.
  const rect = await page.evaluate(() => window.__hw.timeline.rectOf('toolu_00000009'));
  assert.ok(rect && rect.w > 4, 'zoomed to the linked call: ' + JSON.stringify(rect));
  // Selecting another call changes the link; closing the details drops it.
  await page.evaluate(() => window.__hw.timeline.focus('toolu_00000005'));
  await page.waitForTimeout(100);
  const other = await page.evaluate(() => window.__hw.timeline.rectOf('toolu_00000005'));
  await page.mouse.click(other.x + other.w / 2, other.y + other.h / 2);
  await page.waitForURL(/[?&]call=toolu_00000005(&|$)/);
  await page.keyboard.press('Escape');
  await insp.waitFor({ state: 'detached' });
  await page.waitForFunction(() => !location.hash.includes('call='));
  // Back to a linked call by editing the address.
  await page.evaluate((id) => { location.hash = '#/s/' + id + '?call=toolu_00000009'; }, REAL);
  await insp.waitFor();
  assert.match(await insp.innerText(), /Exit code 3/);
  clean(seen);
  await page.close();
});

test('a link to a call the session does not have says which', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL) + '?call=toolu_nosuchcall');
  await loaded(page);
  assert.equal(await page.getByTestId('not-in-session').innerText(), 'This session has no call toolu_nosuchcall.');
  clean(seen);
  await page.close();
});

test('a filter on an agent the session does not have says so, and clears', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(PARALLEL) + '?agent=agent-not-here');
  await loaded(page);
  const said = page.getByTestId('no-such-agent');
  await said.waitFor({ timeout: 10000 });
  assert.equal(await said.innerText(), 'This session has no agent agent-not-here.');
  await page.getByRole('button', { name: 'clear filters' }).click();
  await said.waitFor({ state: 'detached' });
  await page.locator('[role=treeitem]').first().waitFor();
  // An agent it has is no such news.
  const agent = (await api(`/v1/sessions/${encodeURIComponent(PARALLEL)}/agents`)).body.agents.find((a) => a.agent_id);
  await page.goto(`${BASE}/#/s/${encodeURIComponent(PARALLEL)}?agent=${encodeURIComponent(agent.agent_id)}`);
  await page.reload();
  await loaded(page);
  await page.locator(`[role=treeitem][data-agent="${agent.agent_id}"]`).waitFor();
  assert.equal(await said.count(), 0);
  clean(seen);
  await page.close();
});

test('Back retraces the calls and agents opened from the details, then leaves the session', async () => {
  const want = await expected(REAL);
  const child = want.toolCalls.find((c) => c.parent_tool_use_id && want.toolCalls.some((p) => p.tool_use_id === c.parent_tool_use_id));
  assert.ok(child, 'the capture has a call of a subagent');
  const parent = want.toolCalls.find((c) => c.tool_use_id === child.parent_tool_use_id);
  const { page, seen } = await open('/#/');
  await page.locator(`[data-session="${REAL}"]`).waitFor();
  await page.evaluate(([s, c]) => { location.hash = '#/s/' + s + '?call=' + c; }, [REAL, child.tool_use_id]);
  await loaded(page);
  const insp = page.getByTestId('inspector');
  const shows = (id) => insp.locator('code', { hasText: new RegExp('^' + id + '$') }).waitFor();
  await shows(child.tool_use_id);
  // The parent call, then its agent, from the details.
  await insp.locator('.kv', { hasText: 'parent call' }).getByRole('button').click();
  await page.waitForURL(new RegExp('call=' + parent.tool_use_id));
  await shows(parent.tool_use_id);
  await insp.locator('.kv', { hasText: /^agent/ }).getByRole('button').click();
  await page.waitForURL(/[?&]inspect=main(&|$)/);
  await insp.locator('h3', { hasText: 'main' }).waitFor();
  // Back: the parent call, the child call, the list.
  await page.goBack();
  await page.waitForURL(new RegExp('call=' + parent.tool_use_id));
  await shows(parent.tool_use_id);
  await page.goBack();
  await page.waitForURL(new RegExp('call=' + child.tool_use_id));
  await shows(child.tool_use_id);
  // Forward steps again.
  await page.goForward();
  await shows(parent.tool_use_id);
  await page.goBack();
  await shows(child.tool_use_id);
  await page.goBack();
  await page.waitForURL(/#\/$/);
  await page.locator(`[data-session="${REAL}"]`).waitFor();
  clean(seen);
  await page.close();
});

test('a selected event is in the URL: Back returns to it, a reload and a link open it', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL) + '?tab=events');
  await loaded(page);
  const row = page.locator('.erow[data-seq]').nth(3);
  const seq = await row.getAttribute('data-seq');
  await row.click();
  await page.waitForURL(new RegExp(`[?&]seq=${seq}(&|$)`));
  const insp = page.getByTestId('inspector');
  await insp.waitFor();
  const shown = await insp.locator('h3').innerText();
  // Its agent, from the details, is a step Back undoes.
  await insp.locator('.kv', { hasText: /^agent/ }).getByRole('button').click();
  await page.waitForURL(/[?&]inspect=/);
  await page.goBack();
  await page.waitForURL(new RegExp(`[?&]seq=${seq}(&|$)`));
  await page.waitForFunction(([seq]) => document.querySelector('.erow.sel')?.dataset.seq === seq, [seq]);
  assert.equal(await insp.locator('h3').innerText(), shown);
  // A reload (or the link, shared) opens the same event.
  await page.reload();
  await loaded(page);
  await page.waitForFunction(([seq]) => document.querySelector('.erow.sel')?.dataset.seq === seq, [seq]);
  assert.equal(await page.getByTestId('inspector').locator('h3').innerText(), shown);
  // Closing the details drops it from the URL.
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !/[?&]seq=/.test(location.hash));
  clean(seen);
  await page.close();
});

test('tool output kept as a preview is shown decoded', async () => {
  const { page, seen, insp } = await openLinked(PREVIEW, 'toolu_preview');
  const events = await all(`/v1/sessions/${PREVIEW}/events`, 'events');
  const stored = events.find((e) => e.event === 'PostToolUse').envelope.payload.tool_response;
  assert.equal(stored.hookwatch_capture, 'preview', 'the privacy rules kept a preview');
  const out = insp.locator('section', { has: page.locator('h4', { hasText: /^Output/ }) });
  const text = await out.innerText();
  assert.match(text, /ok {2}\tgithub\.com\/dev\/demo\/pkg\t0\.012s\n {2}ok/, 'lines as the tool printed them:\n' + text);
  assert.match(text, /--- FAIL: TestQuote "quoted"\n\s*FAIL\tgithub\.com/, 'the tail, decoded');
  assert.match(text, /bytes not kept/);
  assert.doesNotMatch(text, /\\n|\\"|\\t/, 'no escapes left');
  clean(seen);
  await page.close();
});

test('model messages on the stream update the page', async () => {
  const want = await expected(REAL);
  const main = want.agentList.find((a) => a.agent_id === '');
  const first = want.toolCalls[0];
  const id = 'toolu_model_message';
  // As of an event after every stored one: newer than the page's snapshot.
  const seq = want.session.last_seq + 1000;
  const msg = {
    session_id: REAL,
    model_seq: seq,
    session: { ...want.session, counts: { ...want.session.counts, tool_calls: want.session.counts.tool_calls + 1 } },
    agents: [{ ...main, tool_count: main.tool_count + 1 }],
    tool_calls: [
      { ...first, status: 'denied', decision: { action: 'deny', reason: 'changed live' } },
      { tool_use_id: id, agent_id: '', agent_type: null, tool_name: 'ModelProbe', family: 'other', status: 'ok', started_at: first.started_at, ended_at: first.started_at, duration_ms: 3, parent_tool_use_id: '', depth: 0, decision: null },
    ],
  };
  // The session's stream, as a collector that sends model messages writes it.
  const page = await browser.ctx.newPage();
  await page.route(/\/v1\/stream\?session_id=/, (route) => route.fulfill({
    status: 200,
    headers: { 'Content-Type': 'text/event-stream' },
    body: `retry: 60000\n: connected\n\nevent: model\nid: ${seq}:${seq}\ndata: ${JSON.stringify(msg)}\n\n`,
  }));
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(BASE + '/#/s/' + encodeURIComponent(REAL));
  await loaded(page);
  await page.waitForFunction((id) => window.__hw.model.calls.has(id), id);
  assert.equal(await page.evaluate((id) => window.__hw.model.calls.get(id).status, id), 'ok');
  assert.equal(await page.evaluate((id) => window.__hw.model.calls.get(id).status, first.tool_use_id), 'denied', 'an existing call is replaced');
  await page.waitForFunction((n) => +document.querySelector('[role=treeitem][data-agent=""]').dataset.calls === n, want.calls.get('').size + 1);
  assert.match(await page.locator('.facts').innerText(), new RegExp(`\\b${want.session.counts.tool_calls + 1} tool calls`));
  assert.deepEqual(errors, []);
  await page.close();
});

test('the session list has the same columns empty and full', async () => {
  const { page, seen } = await open('/#/');
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  const full = await page.$$eval('.shead > span', (els) => els.map((e) => e.textContent));
  const rowCells = await page.locator('.srow').first().locator(':scope > span').count();
  assert.equal(rowCells, full.length, 'a row has a cell per column');
  const empty = await browser.ctx.newPage();
  // An empty collector: no sessions, and nothing on the stream.
  await empty.route(/\/v1\/sessions\?/, (route) => route.fulfill({ status: 200, contentType: 'application/json', body: '{"sessions":[],"next_cursor":""}' }));
  await empty.route(/\/v1\/stream/, (route) => route.fulfill({ status: 200, headers: { 'Content-Type': 'text/event-stream' }, body: 'retry: 60000\n: connected\n\n' }));
  await empty.goto(BASE + '/#/');
  await empty.locator('.empty').waitFor();
  assert.deepEqual(await empty.$$eval('.shead > span', (els) => els.map((e) => e.textContent)), full);
  assert.equal(await empty.getByTestId('session-count').innerText(), '0 sessions');
  await empty.close();
  clean(seen);
  await page.close();
});

test('an empty collector says how to get sessions in, for either agent', async () => {
  const page = await browser.ctx.newPage();
  await page.route(/\/v1\/sessions\?/, (route) => route.fulfill({ status: 200, contentType: 'application/json', body: '{"sessions":[],"next_cursor":""}' }));
  await page.route(/\/v1\/stream/, (route) => route.fulfill({ status: 200, headers: { 'Content-Type': 'text/event-stream' }, body: 'retry: 60000\n: connected\n\n' }));
  await page.goto(BASE + '/#/');
  const text = await page.getByTestId('no-sessions').innerText();
  for (const cmd of ['hookwatch install', 'hookwatch install --codex', 'hookwatch import', 'hookwatch demo']) {
    assert.ok(text.includes(cmd), `the empty list names ${cmd}: ${text}`);
  }
  await page.close();
});

test('the page is named after the session it shows', async () => {
  const { body: s } = await api('/v1/sessions/' + encodeURIComponent(PARALLEL));
  assert.ok(s.title, 'the session has a title');
  const { page, seen } = await open('/#/s/' + encodeURIComponent(PARALLEL));
  await page.waitForFunction((t) => document.title.startsWith(t), s.title.slice(0, 40));
  assert.match(await page.title(), / · hookwatch$/);
  // Back on the list, the page is the list's again.
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.waitForFunction(() => document.title === 'hookwatch · sessions');
  clean(seen);
  await page.close();
});

test('the header\'s failed and denied counts list those calls', async () => {
  // Failed is the collector's verdict (an error or an interruption): the
  // list shows every event of those calls, and of no other.
  const shows = async (id, word, want) => {
    const { page, seen } = await open('/#/s/' + encodeURIComponent(id));
    await loaded(page);
    const count = page.getByTestId('count-' + word);
    assert.equal(Number((await count.locator('b').innerText()).replace(/,/g, '')), want.calls.size, `the header counts the ${word} calls`);
    await count.click();
    await page.waitForURL(/[?&]tab=events(&|$)/);
    assert.equal(await page.getByRole('tab', { selected: true }).innerText(), 'Events');
    assert.equal(await page.getByLabel('Status', { exact: true }).inputValue(), word === 'failed' ? 'failed' : word);
    const events = want.events.filter((e) => e.copy !== true && want.calls.has(e.tool_use_id)).map((e) => e.seq).sort((a, b) => a - b);
    await page.waitForFunction((n) => document.querySelectorAll('.elist .erow').length === n, events.length);
    assert.deepEqual(await page.$$eval('.elist .erow', (rows) => rows.map((r) => Number(r.dataset.seq)).sort((a, b) => a - b)), events);
    clean(seen);
    await page.close();
  };
  const of = async (id, pick) => {
    const e = await expected(id);
    return { calls: new Set(e.toolCalls.filter(pick).map((c) => c.tool_use_id)), events: e.events };
  };
  const failed = await of(REAL, (c) => c.failed === true);
  assert.ok(failed.calls.size > 0, 'the capture has failed calls');
  await shows(REAL, 'failed', failed);
  let denied = null;
  for (const id of [REAL, PARALLEL, OUTLIER, CODEX, TRANSCRIPT]) {
    const d = await of(id, (c) => c.status === 'denied');
    if (d.calls.size) { denied = [id, d]; break; }
  }
  assert.ok(denied, 'a fixture has denied calls');
  await shows(denied[0], 'denied', denied[1]);
});

test('hostile payloads render as inert text everywhere', async () => {
  const { page, seen } = await open('/#/?q=' + XSS.slice(0, 8));
  const row = page.locator(`[data-session="${XSS}"]`);
  await row.waitFor();
  const rowText = await row.innerText();
  assert.ok(rowText.includes(XSS_STRINGS[0]), 'title shown as text: ' + rowText);
  await row.click();
  await loaded(page);
  const model = await page.evaluate(() => [...window.__hw.model.calls.keys()]);
  assert.ok(model.length >= 4);
  // Open every call, every event, every agent, every tab.
  for (const id of model) {
    await page.evaluate((id) => window.__hw.timeline.focus(id), id);
    await page.waitForTimeout(50);
    const rect = await page.evaluate((id) => window.__hw.timeline.rectOf(id), id);
    await page.mouse.move(rect.x + Math.max(1, rect.w / 2), rect.y + rect.h / 2); // tooltip
    await page.mouse.click(rect.x + Math.max(1, rect.w / 2), rect.y + rect.h / 2);
    await page.getByTestId('inspector').waitFor();
    for (const d of await page.locator('details.raw').all()) await d.locator('summary').click();
  }
  for (const a of await page.locator('[role=treeitem]').all()) await a.click();
  let text = await page.evaluate(() => document.body.innerText);
  await page.getByRole('tab', { name: 'Events' }).click();
  for (const r of await page.locator('.erow').all()) {
    await r.click();
    await page.locator('details.raw summary').click();
    text += await page.evaluate(() => document.body.innerText);
  }
  await page.getByRole('tab', { name: 'Turns' }).click();
  for (const t of await page.locator('.turn .thead').all()) await t.click();
  text += await page.evaluate(() => document.body.innerText);
  await page.getByRole('tab', { name: 'Numbers' }).click();
  text += await page.evaluate(() => document.body.innerText);
  await page.getByRole('tab', { name: 'Timeline' }).click();

  const verdict = await page.evaluate(() => {
    const app = document.getElementById('app');
    const handlers = [];
    for (const el of app.querySelectorAll('*')) {
      for (const a of el.attributes) if (/^on/i.test(a.name)) handlers.push(`${el.tagName} ${a.name}`);
    }
    return {
      xss: window.__xss,
      violations: window.__violations,
      injected: [...app.querySelectorAll('script, iframe, img, svg, style, object, embed, form, base, link, meta')].map((e) => e.outerHTML.slice(0, 80)),
      handlers,
      jsLinks: [...document.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')).filter((h) => !/^#\//.test(h)),
    };
  });
  assert.equal(verdict.xss, undefined, 'an XSS payload ran');
  assert.deepEqual(verdict.violations, [], 'Content-Security-Policy violations');
  assert.deepEqual(verdict.injected, [], 'markup from payloads');
  assert.deepEqual(verdict.handlers, [], 'event-handler attributes');
  assert.deepEqual(verdict.jsLinks, [], 'links other than the dashboard\'s own routes');
  for (const s of XSS_STRINGS) assert.ok(text.includes(s), 'shown as text: ' + s);
  clean(seen);
  await page.close();
});

test('bidi controls in a payload show as code points, never reordering the text around them', async () => {
  // "cat \u2067txt.exe\u2069" would read "cat exe.txt", the title "gub eht xif exe.png".
  const sid = newID('b1d10000');
  const cwd = '/home/dev/src/\u202Eevil-proj';
  const t0 = Date.now() - 10000;
  const at = (env, s) => ({ ...env, received_at: new Date(t0 + s * 1000).toISOString() });
  const tool = { tool_name: '\u202Edaer', tool_use_id: 'toolu_bidi_tool', prompt_id: 'b1', cwd, tool_input: {} };
  await post([
    at(hookEnv(sid, 0, { hook_event_name: 'SessionStart', source: 'startup', cwd }), 0),
    at(hookEnv(sid, 1, { hook_event_name: 'UserPromptSubmit', prompt: '\u202Egnp.exe fix the bug', prompt_id: 'b1', cwd }), 1),
    at(hookEnv(sid, 2, { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: 'toolu_bidi', prompt_id: 'b1', cwd,
      tool_input: { command: 'cat \u2067txt.exe\u2069 # שלום\u200F' } }), 2),
    at(hookEnv(sid, 3, { hook_event_name: 'PreToolUse', ...tool }), 3),
    at(hookEnv(sid, 4, { hook_event_name: 'PostToolUse', ...tool, tool_response: {} }), 9),
  ]);
  const controls = /[\u202A-\u202E\u2066-\u2069]/;
  const { page, seen } = await open(`/#/s/${sid}?call=toolu_bidi&tab=events`);
  await loaded(page);
  const insp = page.getByTestId('inspector');
  await insp.waitFor();
  const text = await page.locator('body').innerText();
  assert.doesNotMatch(text, controls, 'a bidi control is on the page as it came');
  assert.ok(text.includes('⟨U+202E⟩gnp.exe fix the bug'), 'the title: ' + text.slice(0, 300));
  assert.ok(text.includes('⟨U+202E⟩evil-proj'), 'the project');
  assert.ok((await insp.innerText()).includes('cat ⟨U+2067⟩txt.exe⟨U+2069⟩ # שלום\u200F'), 'the command, its right-to-left mark kept: ' + await insp.innerText());
  assert.ok((await page.title()).startsWith('⟨U+202E⟩gnp.exe fix the bug'), 'the tab: ' + await page.title());
  // The tooltips as the text.
  const tooltips = () => page.evaluate(() => [...document.querySelectorAll('[title]')].map((e) => e.title));
  assert.deepEqual((await tooltips()).filter((t) => controls.test(t)), [], 'a tooltip with a bidi control as it came');
  assert.ok((await tooltips()).includes('⟨U+202E⟩gnp.exe fix the bug'), 'the title\'s tooltip');
  // What a screen reader speaks (or the page shows) of an attribute, as
  // the text: none of the page's, and any a view would set from a payload.
  const TEXT_ATTRIBUTES = ['aria-label', 'aria-description', 'aria-roledescription', 'aria-valuetext', 'aria-placeholder', 'placeholder', 'alt'];
  const spoken = await page.evaluate((names) => [...document.querySelectorAll(names.map((a) => `[${a}]`).join(', '))]
    .flatMap((e) => names.map((a) => e.getAttribute(a)).filter((v) => v !== null)), TEXT_ATTRIBUTES);
  assert.deepEqual(spoken.filter((t) => controls.test(t)), [], 'an attribute read as text with a bidi control as it came');
  const rendered = await page.evaluate(async ({ names, value }) => {
    const app = document.querySelector('script[type=module][src$="/app.js"]').src;
    const { html, render } = await import(new URL('lib/html.js', app).href);
    const el = document.createElement('div');
    render(html`<p ...${Object.fromEntries(names.map((a) => [a, value]))}>x</p><input placeholder=${value} /><img alt=${value} />`, el);
    return [...el.children].flatMap((e) => names.map((a) => e.getAttribute(a)).filter((v) => v !== null));
  }, { names: TEXT_ATTRIBUTES, value: `${cwd} cat \u2067txt.exe\u2069` });
  assert.equal(rendered.length, TEXT_ATTRIBUTES.length + 2);
  for (const v of rendered) assert.equal(v, '/home/dev/src/⟨U+202E⟩evil-proj cat ⟨U+2067⟩txt.exe⟨U+2069⟩', 'an attribute as a view sets it');
  // The list too.
  await page.goto(BASE + '/#/');
  const row = page.locator(`[data-session="${sid}"]`);
  await row.waitFor({ timeout: 15000 });
  assert.doesNotMatch(await row.innerText(), controls);
  assert.ok((await row.innerText()).includes('⟨U+202E⟩gnp.exe fix the bug'));
  assert.equal(await row.locator('.t1').getAttribute('title'), '⟨U+202E⟩gnp.exe fix the bug');
  assert.deepEqual((await tooltips()).filter((t) => controls.test(t)), [], 'a tooltip of the list with a bidi control as it came');
  // The timeline draws its calls' names on a canvas, which honours the
  // controls as the page does: what it draws is recorded.
  await page.addInitScript(() => {
    const fill = CanvasRenderingContext2D.prototype.fillText;
    window.__drawn = [];
    CanvasRenderingContext2D.prototype.fillText = function (t, ...rest) { window.__drawn.push(String(t)); return fill.call(this, t, ...rest); };
  });
  await page.goto(`${BASE}/#/s/${sid}`);
  await page.reload();
  await loaded(page);
  await page.waitForFunction(() => window.__drawn.some((t) => t.includes('daer')), null, { timeout: 10000 });
  const drawn = await page.evaluate(() => window.__drawn);
  assert.deepEqual(drawn.filter((t) => controls.test(t)), [], 'drawn with its bidi controls');
  assert.ok(drawn.includes('⟨U+202E⟩daer'), 'the call\'s name drawn: ' + JSON.stringify(drawn.filter((t) => t.includes('daer'))));
  clean(seen);
  await page.close();
});

test('a session with parallel subagents: timeline, inspector and the context curve', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(PARALLEL));
  await loaded(page);
  const lanes = await page.evaluate(() => window.__hw.timeline.lanes());
  assert.ok(lanes.length >= 7, 'main, subagents and the compaction agent');
  const overlap = await page.evaluate(() => {
    const subs = [...window.__hw.model.agents.values()].filter((a) => a.id && a.calls.length);
    let n = 0;
    for (const a of subs) for (const b of subs) if (a !== b && a.start < b.stop && b.start < a.stop) n++;
    return n / 2;
  });
  assert.ok(overlap >= 2, 'subagents run in parallel');
  await page.getByRole('tab', { name: 'Numbers' }).click();
  await page.getByTestId('curve').locator('canvas').first().waitFor();
  await page.getByRole('tab', { name: 'Timeline' }).click();
  clean(seen);
  await page.close();
});

test('the context curve reads its times as the rest of the dashboard, its axis labels apart', async () => {
  const clock = /^\d\d:\d\d:\d\d(\.\d{3})?$/;
  const { page, seen } = await open('/#/s/' + encodeURIComponent(PARALLEL) + '?tab=numbers');
  for (const width of [1920, 1280, 820]) {
    await page.setViewportSize({ width, height: 900 });
    await loaded(page);
    await page.getByTestId('curve').locator('canvas').first().waitFor();
    await page.waitForFunction((w) => window.__hw.curve && Math.abs(window.__hw.curve.width - document.querySelector('.curve').clientWidth) < 2 && window.__hw.curve.axes[0]._values, width);
    const axis = await page.evaluate(() => {
      const u = window.__hw.curve, ax = u.axes[0];
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = ax.font[0];
      return ax._values.map((label, i) => ({ label, x: u.valToPos(ax._splits[i], 'x'), w: ctx.measureText(label).width }));
    });
    assert.ok(axis.length >= 2, `ticks at ${width} px`);
    for (const t of axis) assert.match(t.label, clock, `a time on the axis at ${width} px`);
    for (let i = 1; i < axis.length; i++) {
      assert.ok(axis[i].x - axis[i - 1].x >= (axis[i].w + axis[i - 1].w) / 2 + 4, `labels ${axis[i - 1].label} and ${axis[i].label} apart at ${width} px`);
    }
  }
  const over = await page.locator('.curve .u-over').boundingBox();
  await page.mouse.move(over.x + over.width / 2, over.y + over.height / 2);
  assert.match(await page.locator('.curve .u-legend .u-series').first().locator('.u-value').textContent(), clock, 'the cursor\'s time');
  clean(seen);
  await page.close();
});

test('a session waiting on a background subagent: its status, and the lane beyond its call', async () => {
  const want = await expected(BACKGROUND);
  // What the collector's model says (2.1.332: the main agent stopped, the
  // survey subagent it launched in the background still runs).
  assert.equal(want.session.status, 'background');
  assert.equal(want.session.counts.prompts, 1, 'the task notification is no prompt of the user');
  assert.equal(want.session.counts.task_notifications, 1);
  assert.equal(want.session.title, 'capture: first run');
  const bg = want.agentList.filter((a) => a.background);
  assert.deepEqual(bg.map((a) => a.description).sort(), ['inspect', 'survey']);
  assert.deepEqual(bg.filter((a) => !a.stopped_at).map((a) => a.description), ['survey'], 'survey still runs');
  assert.equal(bg.find((a) => a.description === 'inspect').notification_status, 'completed');

  const { page, seen } = await open('/#/s/' + encodeURIComponent(BACKGROUND));
  await loaded(page);
  assert.equal(await page.getByTestId('session-status').innerText(), 'background work running');
  const lanes = await page.evaluate(() => window.__hw.timeline.lanes());
  for (const a of bg) {
    const call = want.toolCalls.find((c) => c.tool_use_id === a.spawn_tool_use_id);
    assert.equal(call.status, 'ok', 'the spawning call returned');
    const l = lanes.find((x) => x.agent === a.agent_id);
    assert.ok(l.background, `lane of ${a.description} has a background stretch`);
    assert.equal(l.background[0], Date.parse(call.ended_at), 'it starts where the call ended');
    assert.ok(l.end > Date.parse(call.ended_at) && l.background[1] === l.end, `the lane of ${a.description} goes on beyond its call`);
    const row = page.locator(`[role=treeitem][data-agent="${a.agent_id}"]`);
    assert.equal(await row.getAttribute('data-background'), 'true');
    assert.match(await row.innerText(), a.stopped_at ? /\bbackground\b/ : /\bbg running\b/);
  }
  // The nested subagent ran synchronously: no background stretch.
  const nested = want.agentList.find((a) => a.description === 'deeper');
  assert.equal(lanes.find((x) => x.agent === nested.agent_id).background, null);

  // The list shows the status, and filters by it.
  await page.goto(BASE + '/#/?status=background');
  const row = page.locator(`[data-session="${BACKGROUND}"]`);
  await row.waitFor();
  assert.match(await row.innerText(), /background/);
  clean(seen);
  await page.close();
});

test('a subagent stopped by an API error shows stopped and failed, in its lane and its details', async () => {
  const { readFile } = await import('node:fs/promises');
  await post(JSON.parse(await readFile(APIERROR_FILE, 'utf8')));
  for (let i = 0; i < 50 && (await api('/v1/sessions/' + APIERROR)).body?.status !== 'failed'; i++) await new Promise((r) => setTimeout(r, 100));
  const want = await expected(APIERROR);
  assert.equal(want.session.status, 'failed', "the main agent's turn failed too");
  const sub = want.agentList.find((a) => a.agent_id !== '');
  assert.ok(sub.stopped_at, 'the subagent stopped at its StopFailure');
  assert.ok(sub.stop_error, 'with the error kind the client named');
  assert.match(sub.last_message, /^API Error: 400 /);
  assert.equal(want.agentList.find((a) => a.agent_id === '').stop_error, undefined, "the main agent's failure is the session's");

  const { page, seen } = await open('/#/s/' + encodeURIComponent(APIERROR));
  await loaded(page);
  assert.equal(await page.getByTestId('session-status').innerText(), 'failed');
  const row = page.locator(`[role=treeitem][data-agent="${sub.agent_id}"]`);
  const badge = row.getByTestId('agent-stop-error');
  assert.equal(await badge.innerText(), 'failed');
  assert.match(await badge.getAttribute('title'), new RegExp('API error: ' + sub.stop_error));
  assert.equal(await page.locator('[role=treeitem][data-agent=""]').getByTestId('agent-stop-error').count(), 0);
  await row.click();
  const insp = page.getByTestId('inspector');
  await insp.waitFor();
  assert.equal(await insp.getByTestId('agent-stop-error').innerText(), 'failed: ' + sub.stop_error);
  const text = await insp.innerText();
  assert.ok(!/\brunning\b/.test(text), 'not shown running:\n' + text);
  assert.ok(text.includes(sub.last_message), 'the error text is its last message:\n' + text);
  clean(seen);
  await page.close();
});

test('a resumed session: the cost of an expired cache, and a context curve without a status line', async () => {
  const want = await expected(RESUMED);
  const r = want.session.resume;
  assert.equal(r.prompt_cache_likely_expired, true);
  assert.equal(want.events.filter((e) => e.kind === 'statusline').length, 0, 'no status line in this session');
  const { page, seen } = await open('/#/s/' + encodeURIComponent(RESUMED));
  await loaded(page);
  const fact = await page.getByTestId('resume-cost').innerText();
  assert.match(fact, new RegExp(`resumed ${r.context_tokens.toLocaleString('en')} tokens with an expired cache: ~\\$${r.estimated_cache_write_usd}`));
  assert.equal(await page.getByTestId('session-status').innerText(), 'ended');
  await page.getByRole('tab', { name: 'Numbers' }).click();
  await page.getByTestId('curve').locator('canvas').first().waitFor();
  assert.equal(Number(await page.getByTestId('curve').getAttribute('data-points')), want.session.runs.filter((x) => x.resume).length, 'one point per resume');
  clean(seen);
  await page.close();
});

test('a session links to the sessions forked from it, in its header and its row of the list', async () => {
  const base = (await api('/v1/sessions/' + encodeURIComponent(REAL))).body;
  const fork = base.child_session_ids[0];
  assert.equal((await api('/v1/sessions/' + encodeURIComponent(fork))).body.lineage, 'fork');
  const { page, seen } = await open('/#/s/' + encodeURIComponent(REAL));
  const children = page.getByTestId('session-children');
  await children.filter({ hasText: /^forked into / }).waitFor();
  assert.equal(await children.innerText(), 'forked into ' + fork.slice(0, 8) + '…');
  await children.getByRole('link').click();
  await page.waitForURL(new RegExp('#/s/' + fork + '$'));
  await page.getByTestId('session-lineage').filter({ hasText: 'forked from ' + REAL.slice(0, 8) }).waitFor();
  // The list: the parent's row says it was forked, and links to the fork.
  await page.goto(BASE + '/#/?q=' + REAL.slice(0, 8));
  const tag = page.locator(`[data-session="${REAL}"] [data-testid=session-children]`);
  await tag.filter({ hasText: /forked into/ }).waitFor();
  assert.equal(await tag.getByRole('link').getAttribute('href'), '#/s/' + fork);
  clean(seen);
  await page.close();
});

test('a lineage tag of the session list keeps inside its column at every width, ending in an ellipsis, whole in its tooltip', async () => {
  const base = (await api('/v1/sessions/' + encodeURIComponent(REAL))).body;
  const fork = base.child_session_ids[0];
  const { page, seen } = await open('/#/?q=' + fork.slice(0, 8));
  const tag = page.locator(`[data-session="${fork}"] .lineage > .tag`).first();
  for (const width of [1920, 1280, 1200]) {
    await page.setViewportSize({ width, height: 800 });
    await tag.waitFor();
    const g = await tag.evaluate((el) => {
      const col = el.parentElement.getBoundingClientRect(), box = el.getBoundingClientRect();
      return { right: box.right, colRight: col.right, cut: el.scrollWidth > el.clientWidth, ellipsis: getComputedStyle(el).textOverflow, title: el.title };
    });
    assert.ok(g.right <= g.colRight + 0.5, `the tag ends inside its column at ${width} px: ${JSON.stringify(g)}`);
    if (g.cut) assert.equal(g.ellipsis, 'ellipsis', `a cut tag ends in an ellipsis at ${width} px`);
    assert.match(g.title, new RegExp(REAL), 'the tooltip names the parent whole');
  }
  clean(seen);
  await page.close();
});

// lowContrast lists the elements matching selector whose text reads at less
// than 4.5:1 (WCAG AA for text this size) against the first opaque
// background behind it.
function lowContrast(page, selector) {
  return page.$$eval(selector, (els) => {
    const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
    const lum = (c) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
    };
    const bgOf = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = rgb(getComputedStyle(e).backgroundColor);
        if (c.length === 3 || c[3] > 0.5) return c;
      }
      return [255, 255, 255];
    };
    return els.filter((el) => el.offsetParent !== null).map((el) => {
      const a = lum(rgb(getComputedStyle(el).color)), b = lum(bgOf(el));
      return { text: el.textContent.trim().slice(0, 30), ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
    }).filter((r) => r.ratio < 4.5).map((r) => `${r.text}: ${r.ratio.toFixed(2)}:1`);
  });
}

test('in the dark colour scheme the failed and denied counts, their badges and the lineage tags read as text should', async () => {
  const { page, seen } = await open('/#/?q=' + STORY);
  await page.emulateMedia({ colorScheme: 'dark' });
  const row = page.locator(`[data-session="${STORY}"]`);
  await row.waitFor();
  assert.ok(await row.locator('.num.bad').count() && await row.locator('.num.deny').count() && await row.locator('.lineage .tag').count(), 'the story has failed and denied calls and a lineage tag');
  assert.deepEqual(await lowContrast(page, `[data-session="${STORY}"] .num.bad, [data-session="${STORY}"] .num.deny, [data-session="${STORY}"] .lineage .tag`), []);
  await page.goto(BASE + '/#/s/' + encodeURIComponent(STORY));
  await loaded(page);
  await page.locator('.agent .badge.bad').first().waitFor();
  assert.deepEqual(await lowContrast(page, '.facts .bad b, .facts .deny b, [data-testid=session-lineage], .agent .badge.bad, .agent .badge.deny, .lg .lg-deny'), []);
  clean(seen);
  await page.close();
});

test('a fork whose parent the collector never saw reads as a fork, in the header and the list', async () => {
  const want = (await api('/v1/sessions/' + encodeURIComponent(FORK))).body;
  assert.deepEqual([want.lineage, want.parent_session_id, want.runs.at(-1).source], ['fork', '', 'fork']);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(FORK));
  await loaded(page);
  assert.equal(await page.getByTestId('session-lineage').innerText(), 'forked (parent unknown)');
  assert.match(await page.getByTestId('resume-cost').innerText(), new RegExp(`^forked ${want.resume.context_tokens} tokens, cache warm$`));
  assert.equal(await page.getByTestId('compare-parent').count(), 0, 'no baseline to compare with');
  await page.goto(BASE + '/#/?q=' + FORK.slice(0, 8));
  const tag = page.locator(`[data-session="${FORK}"] .lin .tag`);
  await tag.waitFor();
  assert.equal(await tag.innerText(), 'forked');
  assert.match(await tag.getAttribute('title'), /forked from a session hookwatch has no record of/);
  clean(seen);
  await page.close();
});

test('a fork beside its baseline: both sides, their shapes and calls as the API compares them', async () => {
  const base = (await api('/v1/sessions/' + encodeURIComponent(REAL))).body;
  const fork = base.child_session_ids[0];
  assert.ok(fork, 'the real session has a fork');
  const want = (await api(`/v1/sessions/${encodeURIComponent(REAL)}/compare/${encodeURIComponent(fork)}`)).body;
  assert.equal(want.baseline.session_id, REAL);
  const { page, seen } = await open('/#/s/' + encodeURIComponent(fork));
  await page.getByTestId('session-shape').filter({ hasText: /^single agent$/ }).waitFor();
  await page.getByTestId('compare-parent').click();
  await page.waitForURL(/#\/compare\//);
  const cells = async (testid) => {
    const row = page.getByTestId(testid);
    await row.waitFor();
    return [await row.locator('[data-side=a]').innerText(), await row.locator('[data-side=b]').innerText()];
  };
  const [sa, sb] = await cells('compare-session');
  assert.ok(REAL.startsWith(sa.replace('…', '')) && fork.startsWith(sb.replace('…', '')), `sessions ${sa} | ${sb}`);
  assert.deepEqual(await cells('compare-shape'), ['fan-out of 2', 'single agent']);
  // A long title wraps in its column rather than running into the other's.
  await page.getByTestId('compare-title').waitFor();
  const overflowing = await page.evaluate(() => [...document.querySelectorAll('table.ctable td')].filter((td) => td.scrollWidth > td.clientWidth + 1).map((td) => td.textContent));
  assert.deepEqual(overflowing, [], 'cells wider than their column');
  assert.deepEqual(await page.getByTestId('compare-title').locator('td').evaluateAll((tds) => tds.map((td) => getComputedStyle(td).whiteSpace)), ['normal', 'normal']);
  assert.deepEqual(await cells('compare-calls'), [String(want.a.counts.tool_calls), String(want.b.counts.tool_calls)]);
  assert.deepEqual(await cells('compare-rejected'), [String(want.a.counts.rejected), String(want.b.counts.rejected)]);
  const [ba, bb] = await cells('compare-branch');
  assert.equal(ba, 'is the baseline');
  assert.match(bb, /^fork of /);
  assert.match(await page.getByTestId('compare-baseline').innerText(), new RegExp('^Baseline ' + REAL.slice(0, 12)));
  // Every tool row the API has, with its counts on each side.
  const tools = page.getByTestId('compare-tools').locator('tr:not(.csec)');
  assert.equal(await tools.count(), want.tools.length);
  for (let i = 0; i < want.tools.length; i++) {
    const r = want.tools[i];
    assert.deepEqual([await tools.nth(i).locator('th').innerText(), await tools.nth(i).locator('[data-side=a]').innerText(), await tools.nth(i).locator('[data-side=b]').innerText()],
      [r.name, String(r.a), String(r.b)]);
  }
  // Escape goes back to the session that opened the comparison.
  await page.keyboard.press('Escape');
  await page.waitForURL(new RegExp('#/s/' + encodeURIComponent(fork) + '$'));
  await page.getByTestId('compare-parent').waitFor();
  // Opened from a link, Backspace goes to the list; a key a field takes does not.
  await page.goto(`${BASE}/#/compare/${encodeURIComponent(REAL)}/${encodeURIComponent(fork)}`);
  await page.getByTestId('compare-shape').waitFor();
  await page.keyboard.press('Control+Backspace');
  await page.keyboard.press('Shift+Escape');
  assert.match(page.url(), /#\/compare\//, 'a key with a modifier stays');
  await page.keyboard.press('Backspace');
  await page.waitForURL(/#\/$/);
  clean(seen);
  await page.close();

  // Sessions of no common baseline: refused, then compared when asked.
  const other = await open(`/#/compare/${encodeURIComponent(REAL)}/${encodeURIComponent(PARALLEL)}`);
  await other.page.getByTestId('compare-error').filter({ hasText: /share no baseline/ }).waitFor();
  await other.page.getByRole('link', { name: 'Compare them anyway' }).click();
  await other.page.getByTestId('compare-baseline').filter({ hasText: /share no baseline/ }).waitFor();
  assert.equal((await other.page.getByTestId('compare-shape').locator('[data-side=a]').innerText()), 'fan-out of 2');
  assert.deepEqual(other.seen.errors, []);
  await other.page.close();
});

test('a session opened while the collector does not answer shows its error alone, and the banner claims no page loaded', async () => {
  const { page, seen } = await open('/#/');
  await page.locator('[data-session]').first().waitFor();
  await liveState(page);
  let direct;
  await collectorDown(true);
  try {
    // From the list, whose stream was live: the session's page loads nothing.
    await page.evaluate((id) => { location.hash = '#/s/' + encodeURIComponent(id); }, PARALLEL);
    direct = await open('/#/s/' + encodeURIComponent(PARALLEL));
    for (const p of [page, direct.page]) {
      await p.getByTestId('session-error').waitFor({ timeout: 10000 });
      const banner = p.getByTestId('stream-down');
      await banner.waitFor({ timeout: 10000 });
      assert.equal(await banner.innerText(), `The collector at ${BASE} does not answer. Retrying…`);
      assert.equal(await p.locator('.shdr').count(), 0, 'a header of a session not loaded');
      assert.doesNotMatch(await p.locator('main').innerText(), /untitled session/);
    }
  } finally {
    await collectorDown(false);
  }
  for (const { page: p, seen: s } of [{ page, seen }, direct]) {
    await p.getByTestId('session-error').waitFor({ state: 'detached', timeout: 15000 });
    await loaded(p);
    await p.locator('.shdr h2').waitFor();
    s.console = s.console.filter((m) => !/net::ERR_EMPTY_RESPONSE/.test(m));
    clean(s);
    await p.close();
  }
});

test('an unknown session is named so in the tab, its page linking back to the list', async () => {
  const { page, seen } = await open('/#/s/does-not-exist-anywhere');
  const nf = page.getByTestId('not-found');
  await nf.waitFor();
  assert.match(await nf.innerText(), /^No such session yet\n+does-not-exist-anywhere\n/);
  await page.waitForFunction(() => document.title === 'No such session · hookwatch', null, { timeout: 5000 }).catch(() => {});
  assert.equal(await page.title(), 'No such session · hookwatch');
  await nf.getByRole('link', { name: 'Back to the sessions' }).click();
  await page.locator('[data-session]').first().waitFor();
  assert.equal(await page.title(), 'hookwatch · sessions');
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.console.filter((m) => !/404 \(Not Found\)/.test(m)), []);
  await page.close();
});

test('an address that is no page of the dashboard says so, with a link to the list', async () => {
  const { page, seen } = await open('/#/garbage/path');
  const said = page.getByTestId('no-page');
  await said.waitFor({ timeout: 10000 });
  assert.match(await said.innerText(), /^No such page\n+#\/garbage\/path is not a page of the dashboard\.\n/);
  assert.equal(await page.locator('[data-session]').count(), 0, 'the list shown instead');
  assert.equal(await page.title(), 'No such page · hookwatch');
  await said.getByRole('link', { name: 'Go to the sessions' }).click();
  await page.locator('[data-session]').first().waitFor();
  assert.equal(await said.count(), 0);
  // The list's own addresses are still the list.
  for (const hash of ['', '#', '#/', '#/?status=running']) {
    await page.goto(BASE + '/' + hash);
    await page.getByTestId('session-count').waitFor();
    assert.equal(await said.count(), 0, hash);
  }
  clean(seen);
  await page.close();
});

/** faviconAnswers returns the statuses the collector answered the browser's requests for /favicon.ico with: see faviconLog in browser_test.go. */
async function faviconAnswers() {
  const res = await fetch(BASE + '/test/favicon');
  assert.equal(res.status, 200);
  return res.json();
}

test('the browser finds the dashboard\'s icon where the page names it, asks for no /favicon.ico there, and gets the icon there from an answer of the API', async () => {
  // Playwright leaves the requests for /favicon.ico out of a page's: the
  // test's collector counts them.
  const before = (await faviconAnswers()).length;
  const page = await browser.ctx.newPage();
  await page.goto(BASE + '/#/');
  await page.locator('[data-session]').first().waitFor();
  await new Promise((r) => setTimeout(r, 500));
  const href = await page.locator('link[rel=icon]').getAttribute('href');
  const res = await fetch(new URL(href, BASE));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/svg+xml');
  assert.deepEqual((await faviconAnswers()).slice(before), [], 'the dashboard asked for /favicon.ico');
  // An answer of the API opened in a tab names no icon: the browser asks
  // for /favicon.ico, and gets the dashboard's.
  await page.goto(BASE + '/v1/sessions?limit=1');
  await page.waitForFunction(() => document.body?.innerText.includes('sessions'));
  let asked = [];
  for (let i = 0; i < 50 && !asked.length; i++) {
    await new Promise((r) => setTimeout(r, 100));
    asked = (await faviconAnswers()).slice(before);
  }
  assert.deepEqual(asked, [200], 'the answers to /favicon.ico');
  const icon = await fetch(BASE + '/favicon.ico');
  assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
  assert.equal(await icon.text(), await res.text(), 'not the icon the page names');
  await page.close();
});

test('the timeline keeps its axis labels inside the canvas, the last one included', async () => {
  // A session of exactly 10 s from a whole ten seconds: a tick falls at its
  // end, a few pixels before the canvas's right edge.
  const sid = newID('a8150000');
  const t0 = Math.floor((Date.now() - 60000) / 10000) * 10000;
  const at = (env, s) => ({ ...env, received_at: new Date(t0 + s * 1000).toISOString() });
  const call = { tool_name: 'Bash', tool_use_id: 'toolu_axis', prompt_id: 'x1', tool_input: { command: 'ls' } };
  await post([
    at(hookEnv(sid, 0, { hook_event_name: 'SessionStart', source: 'startup' }), 0),
    at(hookEnv(sid, 1, { hook_event_name: 'UserPromptSubmit', prompt: 'axis', prompt_id: 'x1' }), 1),
    at(hookEnv(sid, 2, { hook_event_name: 'PreToolUse', ...call }), 2),
    at(hookEnv(sid, 3, { hook_event_name: 'PostToolUse', ...call, tool_response: {} }), 8),
    at(hookEnv(sid, 4, { hook_event_name: 'Stop', prompt_id: 'x1' }), 9),
    at(hookEnv(sid, 5, { hook_event_name: 'SessionEnd', reason: 'other' }), 10),
  ]);
  const page = await browser.ctx.newPage();
  await page.addInitScript(() => {
    const fill = CanvasRenderingContext2D.prototype.fillText;
    window.__axis = [];
    CanvasRenderingContext2D.prototype.fillText = function (t, x, ...rest) {
      if (this.canvas.closest?.('.tl-axis')) {
        window.__axis.push({ t: String(t), x, w: this.measureText(t).width, W: this.canvas.width / (window.devicePixelRatio || 1) });
      }
      return fill.call(this, t, x, ...rest);
    };
  });
  await page.goto(`${BASE}/#/s/${sid}`);
  await loaded(page);
  await page.waitForFunction(() => window.__axis.length > 0);
  await new Promise((r) => setTimeout(r, 200));
  const drawn = await page.evaluate(() => { const a = window.__axis; const W = a[a.length - 1].W; return a.filter((l) => l.W === W).slice(-20); });
  const W = drawn[drawn.length - 1].W;
  const out = drawn.filter((l) => l.x < 0 || l.x + l.w > W);
  assert.deepEqual(out, [], `labels cut by the canvas's edge (width ${W})`);
  assert.ok(drawn.some((l) => l.x + l.w > W - 60), 'no label near the end: ' + JSON.stringify(drawn));
  await page.close();
});

test('a short call is drawn wide enough to see, short of the next call of its row, and is hit where it is drawn', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(STORY));
  await loaded(page);
  // A view of half a minute or so around the story's shortest call (at
  // most the session's span and a half, which grows while its background
  // agents run): the same bars whenever the test runs.
  await page.evaluate(() => {
    const { model, timeline } = window.__hw;
    const c = [...model.calls.values()].filter((c) => c.status === 'ok' && Number.isFinite(c.start) && Number.isFinite(c.end)).sort((a, b) => (a.end - a.start) - (b.end - b.start))[0];
    timeline.focus(c.id);
    timeline.zoom(16);
  });
  await page.waitForTimeout(100); // one frame for the redraw
  // Every bar in view with the call after it in its row (the timeline's
  // drawing order: by start), and what the canvas shows inside it.
  const bars = await page.evaluate(() => {
    const { model, timeline } = window.__hw;
    const canvas = document.querySelector('.tl-canvas canvas');
    const box = canvas.getBoundingClientRect();
    const px = canvas.getContext('2d');
    const rgb = (x, y) => [...px.getImageData(Math.floor(x - box.left), Math.floor(y - box.top), 1, 1).data.slice(0, 3)].join(',');
    // The colour of each kind of call, as its legend's swatch shows it.
    const colours = new Map([...document.querySelectorAll('.legend .lg')].map((k) => [k.textContent, getComputedStyle(k.querySelector('i')).backgroundColor.match(/\d+/g).slice(0, 3).join(',')]));
    const out = [];
    for (const l of timeline.lanes()) {
      const rows = new Map();
      for (const c of model.agents.get(l.agent).calls) {
        if (!Number.isFinite(c.start) || c.stacked) continue;
        if (!rows.has(c.row)) rows.set(c.row, []);
        rows.get(c.row).push(c);
      }
      for (const calls of rows.values()) {
        const rects = calls.map((c) => timeline.rectOf(c.id));
        calls.forEach((c, i) => {
          const r = rects[i];
          // Calls within half a pixel of each other draw as one: the next
          // bar is the next call's further on.
          const next = rects.slice(i + 1).find((n) => n.x >= r.x + 0.5);
          const merged = i > 0 && rects[i - 1].x > r.x - 0.5;
          if (r.x < box.left || r.x + 6 > box.right) return;
          const span = (model.callEnd(c) - c.start) * (box.width / (timeline.view().t1 - timeline.view().t0));
          // The pixel 3.5 px into the bar, and the colour of its kind.
          out.push({ id: c.id, status: c.status, span, merged, x: r.x, y: r.y, w: r.w, h: r.h, next: next ? next.x : null,
            inside: rgb(Math.floor(r.x) + 3.5, r.y + r.h / 2), colour: colours.get(c.subtype || c.family) });
        });
      }
    }
    return out;
  });
  const short = bars.filter((b) => b.span < 2 && b.status !== 'denied');
  assert.ok(short.length >= 3, 'the story has calls shorter than 2 px in view: ' + JSON.stringify(bars.map((b) => b.span)));
  for (const b of bars) {
    assert.ok(b.w >= b.span - 0.01 && b.w >= 2, 'no bar narrower than its call or 2 px: ' + JSON.stringify(b));
    // Past the 2 px every call has, a bar widens only up to a pixel before the next of its row.
    if (b.w > Math.max(b.span, 2) + 0.01 && b.next != null) assert.ok(b.x + b.w <= b.next - 1 + 0.01, 'a bar widened keeps a pixel from the next of its row: ' + JSON.stringify(b));
  }
  const alone = short.filter((b) => !b.merged && (b.next == null || b.next - b.x >= 6));
  assert.ok(alone.length > 0, 'a short call with room after it');
  for (const b of alone) assert.ok(b.w >= 5, 'a short call is drawn 5 px wide: ' + JSON.stringify(b));
  // Painted so: in its colour 3.5 px in, but where a marker drawn over the
  // calls (the session's start, a compaction) falls there.
  const plain = alone.filter((b) => b.status === 'ok');
  const painted = plain.filter((b) => b.inside === b.colour);
  assert.ok(painted.length > 0 && painted.length >= plain.length / 2, 'short calls painted 5 px wide: ' + JSON.stringify(plain));
  // A click at the far edge of the bar drawn opens that call.
  const b = alone[0];
  await page.mouse.click(b.x + b.w - 0.5, b.y + b.h / 2);
  const insp = page.getByTestId('inspector');
  await insp.waitFor();
  assert.ok((await insp.innerText()).includes(b.id), 'the call clicked at its bar\'s edge is opened: ' + b.id);
  clean(seen);
  await page.close();
});

test('the timeline\'s legend takes two rows at most, beside the buttons or under them, at every width and in either colour scheme', async () => {
  const page = await browser.ctx.newPage();
  const legend = () => page.evaluate(() => {
    const l = document.querySelector('.tl-tools .legend');
    const keys = [...l.querySelectorAll('.lg')].map((k) => k.getBoundingClientRect());
    const fit = document.querySelector('.tl-tools button[aria-label=Fit]').getBoundingClientRect();
    const box = l.getBoundingClientRect();
    return { rows: new Set(keys.map((k) => Math.round(k.top))).size, own: l.classList.contains('own'),
      hidden: keys.filter((k) => k.bottom > box.bottom + 0.5 || k.right > box.right + 0.5).length, beside: box.top < fit.bottom,
      overlaps: box.top < fit.bottom && box.left < fit.right, right: box.right, width: innerWidth };
  });
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    // The story's nine kinds of call, and the parallel session's eleven.
    for (const [sid, width, want] of [[STORY, 820, { own: false, rows: 2 }], [PARALLEL, 820, { own: true, rows: 2 }], [STORY, 1280, { own: false }], [PARALLEL, 1280, { own: false }],
      [STORY, 1920, { own: false, rows: 1 }], [PARALLEL, 1920, { own: false, rows: 1 }]]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(BASE + '/#/s/' + encodeURIComponent(sid));
      await loaded(page);
      await page.waitForTimeout(100);
      const got = await legend();
      const what = `${scheme} ${width} px ${sid === STORY ? 'story' : 'parallel'}: ${JSON.stringify(got)}`;
      assert.ok(got.rows <= 2, 'at most two rows: ' + what);
      if (want.rows) assert.equal(got.rows, want.rows, what);
      assert.equal(got.own, want.own, 'a row of its own: ' + what);
      assert.equal(got.beside, !want.own, 'beside the buttons: ' + what);
      assert.equal(got.hidden, 0, 'every key in sight: ' + what);
      assert.ok(!got.overlaps && got.right <= got.width, 'clear of the buttons, inside the page: ' + what);
    }
  }
  await page.close();
});

test('on a narrow screen the details open under the timeline, the call selected in sight, closed by Escape or their button', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(STORY));
  await page.setViewportSize({ width: 900, height: 800 });
  await loaded(page);
  // The last call of the lowest lane with calls, shown as a link shows a
  // call (in the middle of the timeline, wide enough to click): low and
  // to the right, where details lying over the timeline would cover it.
  const id = await page.evaluate(() => {
    const lanes = window.__hw.timeline.lanes().filter((l) => l.calls > 0);
    const agent = lanes[lanes.length - 1].agent;
    const id = [...window.__hw.model.calls.values()].filter((c) => c.agent === agent && Number.isFinite(c.start)).sort((a, b) => b.start - a.start)[0].id;
    window.__hw.timeline.focus(id);
    return id;
  });
  await page.waitForTimeout(100); // one frame for the redraw
  const scrollTop = () => page.evaluate(() => document.querySelector('.tl-scroll').scrollTop);
  // Where the bar is, measured without scrolling to it (rectOf scrolls a
  // lane out of sight into view): what is at its centre.
  const where = async () => {
    const before = await scrollTop();
    const r = await page.evaluate((id) => window.__hw.timeline.rectOf(id), id);
    const moved = (await scrollTop()) !== before;
    const at = await page.evaluate(([x, y]) => {
      const el = document.elementFromPoint(x, y);
      return el?.closest('.inspector') ? 'inspector' : el?.closest('.tl-canvas') ? 'timeline' : el?.className || el?.tagName;
    }, [r.x + r.w / 2, r.y + r.h / 2]);
    return { r, moved, at };
  };
  const first = await where();
  assert.equal(first.at, 'timeline', 'the call is in sight before it is opened: ' + JSON.stringify(first));
  const insp = page.getByTestId('inspector');
  for (const close of ['Escape', 'button']) {
    await page.mouse.click(first.r.x + first.r.w / 2, first.r.y + first.r.h / 2);
    await insp.waitFor();
    assert.ok((await insp.innerText()).includes(id), 'the details of the call clicked');
    await page.waitForTimeout(100); // the timeline's resize, one frame
    const open = await where();
    assert.ok(!open.moved, 'the bar is in sight without scrolling to it: ' + JSON.stringify(open));
    assert.equal(open.at, 'timeline', 'the bar is not covered: ' + JSON.stringify(open));
    assert.ok(Math.abs(open.r.x - first.r.x) < 1 && Math.abs(open.r.w - first.r.w) < 1, 'the bar stays where it was clicked: ' + JSON.stringify({ first, open }));
    const box = await insp.boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 900 && box.y + box.height <= 800 && box.y > open.r.y + open.r.h, 'the details under the bar, in the page: ' + JSON.stringify(box));
    if (close === 'Escape') await page.keyboard.press('Escape');
    else await insp.getByRole('button', { name: 'Close details' }).click();
    await insp.waitFor({ state: 'detached' });
  }
  clean(seen);
  await page.close();
});

test('with a token, the dashboard asks for it, then loads and follows the stream', { skip: !TOKEN && 'the collector has no token' }, async () => {
  const sessions = await all('/v1/sessions', 'sessions');
  const { page, seen } = await open('/#/');
  let refusals = 0;
  page.on('console', (m) => { if (/401 \(Unauthorized\)/.test(m.text())) refusals++; });
  const form = page.locator('form.token');
  await form.waitFor();
  // Nothing is drawn but the question, and the badge says what is missing.
  await page.getByTestId('needs-token').waitFor();
  assert.equal(await page.locator('.sessions, .session').count(), 0, 'no empty view behind the question');
  await page.locator('.live[data-state=unauthorized]', { hasText: 'token needed' }).waitFor();
  await form.locator('input').fill('not the token');
  await form.locator('button').click();
  await page.getByTestId('token-refused').filter({ hasText: /refused that token/ }).waitFor(); // asked again, saying why
  await form.waitFor();
  // Refused, the stream waits for another token rather than asking again and again.
  const before = refusals;
  await page.waitForTimeout(3000);
  assert.ok(refusals - before <= 1, `${refusals - before} refusals while waiting for a token`);
  await form.locator('input').fill(TOKEN);
  await form.locator('button').click();
  const count = page.getByTestId('session-count');
  await count.filter({ hasText: new RegExp(`^${sessions.length} sessions$`) }).waitFor();
  await page.waitForFunction(() => document.querySelector('.live')?.dataset.state === 'live');
  const sid = '22222222-3333-4444-8555-' + String(Date.now()).slice(-12).padStart(12, '0');
  await post([{ id: 'token-' + sid, runtime: 'claude-code', kind: 'hook', received_at: new Date().toISOString(),
    payload: { session_id: sid, cwd: '/home/dev/src/live', hook_event_name: 'SessionStart', source: 'startup' } }]);
  await page.locator(`[data-session="${sid}"]`).waitFor({ timeout: 10000 });
  // The icon is the dashboard's as its other files: asked for by a tab of an API answer refused for want of the token.
  assert.equal((await fetch(BASE + '/v1/sessions')).status, 401);
  const icon = await fetch(BASE + '/favicon.ico');
  assert.equal(icon.status, 200);
  assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
  clean(seen);
  await page.close();
});

test('on a narrow screen an event row opened low in the Events and Turns lists stays in sight above the details', async () => {
  const { page, seen } = await open('/#/s/' + encodeURIComponent(STORY));
  await page.setViewportSize({ width: 900, height: 800 });
  await loaded(page);
  const insp = page.getByTestId('inspector');
  for (const tab of ['Events', 'Turns']) {
    await page.getByRole('tab', { name: tab }).click();
    if (tab === 'Turns') await page.locator('.turn .thead').first().click();
    // The lowest event row wholly in the list's view: where details
    // opening under the list would cover it.
    const seq = await page.evaluate(() => {
      const rows = [...document.querySelectorAll('.erow')].filter((r) => {
        const b = r.getBoundingClientRect(), v = r.closest('.vlist').getBoundingClientRect();
        return b.height > 0 && b.top >= v.top && b.bottom <= Math.min(v.bottom, innerHeight);
      });
      return rows[rows.length - 1]?.dataset.seq;
    });
    assert.ok(seq, tab + ': an event row in sight');
    const row = page.locator(`.erow[data-seq="${seq}"]`);
    const before = await row.boundingBox();
    assert.ok(before.y > 450, `${tab}: the row is low in the page: ${JSON.stringify(before)}`);
    await row.click();
    await insp.waitFor();
    await page.waitForTimeout(150); // the list's resize, a frame or two
    const at = await row.evaluate((r) => {
      const b = r.getBoundingClientRect();
      const el = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
      return { top: b.top, bottom: b.bottom, hit: el?.closest('.erow')?.dataset.seq || el?.closest('.inspector') && 'inspector' || el?.className };
    });
    assert.equal(at.hit, seq, `${tab}: the row opened is in sight, not under the details: ${JSON.stringify(at)}`);
    await page.keyboard.press('Escape');
    await insp.waitFor({ state: 'detached' });
  }
  clean(seen);
  await page.close();
});
