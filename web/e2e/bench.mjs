// Benchmark, in headless Chromium:
//   HW_SESSION=<id>: time from navigation to the first drawn timeline, to
//   the timeline with the whole model drawn (every agent and tool call of
//   the collector), and to every event loaded, for one session;
//   without HW_SESSION: time to the first rows of the session list and to
//   the whole list, how long a search over it takes to show, and the
//   page's JavaScript heap once the list is loaded (after a garbage
//   collection: what the tab keeps).
//   HOOKWATCH_URL=http://127.0.0.1:7421 HW_SESSION=<id> HW_RUNS=5 node bench.mjs
// Prints one line per run and, last, the medians as JSON
// ({"first", "model", "loaded" (ms), "events"} or {"first", "full", "search" (ms), "heap" (bytes), "sessions"}).
// go test ./web -bench . starts a collector with a 20,000-event session or
// 10,000 sessions and runs this.
import { launch } from './browser.mjs';

const BASE = process.env.HOOKWATCH_URL;
const SESSION = process.env.HW_SESSION;
const RUNS = +(process.env.HW_RUNS || 5);
// HW_REPLAY=1 (with HW_SESSION) answers the session's API requests from a
// recording made before the runs: the figures are then the dashboard's own
// cost, without the collector's time to answer.
const REPLAY = SESSION && process.env.HW_REPLAY === '1';
if (!BASE) throw new Error('set HOOKWATCH_URL');

/** record fetches every page of the session's model and events, by the path the dashboard asks for. */
async function record(id) {
  const out = new Map();
  const p = `/v1/sessions/${encodeURIComponent(id)}`;
  const get = async (path) => {
    const res = await fetch(BASE + path);
    const body = await res.text();
    out.set(path, body);
    return JSON.parse(body);
  };
  await get(p);
  for (const [sub, limit] of [['agents', 1000], ['tool-calls', 1000], ['events', 1000]]) {
    let cursor = '';
    do {
      const body = await get(`${p}/${sub}?limit=${limit}${cursor ? '&cursor=' + encodeURIComponent(cursor) : ''}`);
      cursor = body.next_cursor || '';
    } while (cursor);
  }
  return out;
}
const recording = REPLAY ? await record(SESSION) : null;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};

const browser = await launch();
const firsts = [], fulls = [], models = [], searches = [], heaps = [];
let events = 0;
try {
  // One warm-up load so that the runs measure the dashboard, not the
  // browser's first start.
  const warm = await browser.ctx.newPage();
  await warm.goto(BASE + '/');
  await warm.close();
  for (let i = 0; i < RUNS; i++) {
    const page = await browser.ctx.newPage();
    if (recording) {
      await page.route(/\/v1\/sessions\//, (route) => {
        const u = new URL(route.request().url());
        const body = recording.get(u.pathname + u.search);
        return body === undefined ? route.continue() : route.fulfill({ status: 200, contentType: 'application/json', body });
      });
    }
    if (SESSION) {
      await page.goto(BASE + '/#/s/' + encodeURIComponent(SESSION));
      await page.waitForFunction(() => window.__hw && window.__hw.loadedRender, null, { timeout: 120000 });
      const r = await page.evaluate(() => ({ first: window.__hw.firstRender, model: window.__hw.modelRender, loaded: window.__hw.loadedRender, events: window.__hw.model.events.length, calls: window.__hw.model.calls.size, agents: window.__hw.model.agents.size }));
      console.log(`run ${i + 1}: first render ${r.first.toFixed(0)} ms, whole model drawn (${r.agents} agents, ${r.calls} calls) ${r.model.toFixed(0)} ms, all ${r.events} events loaded ${r.loaded.toFixed(0)} ms`);
      firsts.push(r.first);
      models.push(r.model);
      fulls.push(r.loaded);
      events = r.events;
    } else {
      await page.goto(BASE + '/#/');
      await page.waitForFunction(() => window.__hw && window.__hw.list && window.__hw.list.loaded, null, { timeout: 120000 });
      const r = await page.evaluate(() => ({ first: window.__hw.list.first, full: window.__hw.list.loaded, n: document.querySelector('[aria-label=Sessions]').dataset.count,
        // What the collector took to answer each page of the list, from the request sent to the last byte.
        pages: performance.getEntriesByType('resource').filter((e) => /\/v1\/sessions\?/.test(e.name)).map((e) => e.responseEnd - e.requestStart) }));
      const cdp = await browser.ctx.newCDPSession(page);
      await cdp.send('HeapProfiler.collectGarbage');
      const { usedSize: heap } = await cdp.send('Runtime.getHeapUsage');
      await cdp.detach();
      // A search over every session, from the keystroke to the filtered rows.
      const t0 = Date.now();
      await page.getByLabel('Search sessions').fill('refund');
      await page.getByTestId('session-count').filter({ hasText: / of / }).waitFor();
      const search = Date.now() - t0;
      console.log(`run ${i + 1}: first rows ${r.first.toFixed(0)} ms, all ${r.n} sessions ${r.full.toFixed(0)} ms, search ${search} ms, heap ${(heap / 1e6).toFixed(1)} MB, ${r.pages.length} pages of the API answered in ${median(r.pages).toFixed(0)} ms each (median), ${r.pages.reduce((a, b) => a + b, 0).toFixed(0)} ms in all`);
      heaps.push(heap);
      firsts.push(r.first);
      fulls.push(r.full);
      searches.push(search);
      events = +r.n;
    }
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(SESSION
  ? { first: Math.round(median(firsts)), model: Math.round(median(models)), loaded: Math.round(median(fulls)), events }
  : { first: Math.round(median(firsts)), full: Math.round(median(fulls)), search: median(searches), heap: median(heaps), sessions: events }));
