// Browser test of an agent written in Go: the dashboard shows the agent tree
// of the session examples/agenttree forwarded to a real collector (runtime
// go-sdk, an orchestrator, two workers, four sub-workers). Run by
// go test ./web -run BrowserGoSDK; by hand: HOOKWATCH_URL=… HW_SDK=… node --test sdk.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch } from './browser.mjs';

const BASE = process.env.HOOKWATCH_URL;
const SDK = process.env.HW_SDK;
if (!BASE || !SDK) throw new Error('set HOOKWATCH_URL and HW_SDK (go test ./web does)');

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function get(path) {
  const res = await fetch(BASE + path);
  assert.equal(res.status, 200, path);
  return res.json();
}

test('the tree of a Go agent\'s session: every agent under its parent, at its depth, with its calls', async () => {
  const p = `/v1/sessions/${encodeURIComponent(SDK)}`;
  const session = await get(p);
  assert.equal(session.runtime, 'go-sdk');
  const agents = (await get(p + '/agents?limit=1000')).agents;
  const calls = (await get(p + '/tool-calls?limit=1000')).tool_calls;
  // The program's tree, as the API has it: 7 agents, 3 levels.
  assert.equal(agents.length, 7, 'agents in the API');
  assert.deepEqual(agents.map((a) => a.depth).sort(), [0, 1, 1, 2, 2, 2, 2]);

  const page = await browser.ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(BASE + '/#/s/' + encodeURIComponent(SDK));
  await page.waitForFunction(() => window.__hw && window.__hw.loading === false && window.__hw.loadedRender, null, { timeout: 30000 });
  await page.waitForFunction((n) => document.querySelectorAll('[role=treeitem]').length === n, agents.length, { timeout: 15000 });
  const tree = await page.$$eval('[role=treeitem]', (els) => els.map((e) => ({ id: e.dataset.agent, type: e.dataset.type, level: +e.getAttribute('aria-level'), calls: +e.dataset.calls, text: e.innerText })));
  assert.equal(tree.length, 7, 'agents in the tree');
  assert.equal(tree[0].id, '', 'the orchestrator, the main agent, first');
  for (const [i, row] of tree.entries()) {
    const a = agents.find((x) => x.agent_id === row.id);
    assert.ok(a, `agent "${row.id}" is the API's`);
    assert.equal(row.level, a.depth + 1, `depth of "${row.id}"`);
    assert.equal(row.calls, calls.filter((c) => c.agent_id === row.id).length, `calls of "${row.id}"`);
    if (row.id === '') continue;
    assert.equal(row.type, a.agent_type, `type of "${row.id}"`);
    // Rows come in tree order: an agent's parent is the nearest row above it one level up.
    const parent = tree.slice(0, i).reverse().find((x) => x.level === row.level - 1);
    assert.equal(parent.id, a.parent_agent_id ?? '', `parent of "${row.id}"`);
  }
  // The program's names: worker-a under the orchestrator, worker-a-1 under worker-a.
  const parentOf = (id) => agents.find((x) => x.agent_id === id).parent_agent_id ?? '';
  assert.equal(parentOf('worker-a'), '');
  assert.equal(parentOf('worker-b-2'), 'worker-b');
  const lanes = await page.evaluate(() => window.__hw.timeline.lanes());
  assert.deepEqual(lanes.map((l) => l.agent), tree.map((a) => a.id), 'one lane per agent, in tree order');
  assert.deepEqual(errors, [], 'uncaught errors in the page');
  await page.close();
});
