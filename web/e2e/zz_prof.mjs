import { launch } from './browser.mjs';
const BASE = process.env.HOOKWATCH_URL, S = process.env.HW_SESSION;
const b = await launch();
try {
  const w = await b.ctx.newPage(); await w.goto(BASE + '/'); await w.close();
  const page = await b.ctx.newPage();
  const cdp = await b.ctx.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  await page.goto(BASE + '/#/s/' + S);
  await page.waitForFunction(() => window.__hw && window.__hw.loadedRender, null, { timeout: 120000 });
  const { profile } = await cdp.send('Profiler.stop');
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const dt = profile.timeDeltas; let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]);
    const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
    self.set(k, (self.get(k) || 0) + dt[i] / 1000); total += dt[i] / 1000;
  }
  console.log('total ms', total.toFixed(0));
  for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(v.toFixed(0).padStart(6), k);
  console.log(await page.evaluate(() => JSON.stringify({ first: window.__hw.firstRender, model: window.__hw.modelRender, loaded: window.__hw.loadedRender })));
} finally { await b.close(); }
