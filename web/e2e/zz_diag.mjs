import { launch } from '/work/wt/dashmodel/web/e2e/browser.mjs';
const BASE = process.env.HOOKWATCH_URL, S = process.env.HW_SESSION;
const b = await launch();
try {
  const w = await b.ctx.newPage(); await w.goto(BASE + '/'); await w.close();
  const page = await b.ctx.newPage();
  await page.goto(BASE + '/#/s/' + S);
  await page.waitForFunction(() => window.__hw && window.__hw.loadedRender, null, { timeout: 120000 });
  const r = await page.evaluate(() => ({
    marks: performance.getEntriesByType('mark').map((m) => [m.name, Math.round(m.startTime)]),
    res: performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/')).map((e) => [e.name.replace(/^.*\/v1\//, '').slice(0, 90), Math.round(e.startTime), Math.round(e.requestStart), Math.round(e.responseStart), Math.round(e.responseEnd)]),
  }));
  console.log(r.marks.map((m) => m.join(' ')).join('\n'));
  console.log(r.res.map((m) => m.join(' ')).join('\n'));
} finally { await b.close(); }
