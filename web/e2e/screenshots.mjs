// Screenshots of the dashboard for the README: the session list, a
// session with parallel subagents with a failed test run selected, and
// (with HW_BACKGROUND) a session waiting on a background subagent.
//   HOOKWATCH_URL=… HW_PARALLEL=<id> [HW_BACKGROUND=<id>] HOOKWATCH_SCREENSHOTS=<dir> node screenshots.mjs
// TestScreenshots in browser_test.go runs it against a collector it fills.
import { join } from 'node:path';
import { launch } from './browser.mjs';

const BASE = process.env.HOOKWATCH_URL;
const PARALLEL = process.env.HW_PARALLEL;
const OUT = process.env.HOOKWATCH_SCREENSHOTS;
const BACKGROUND = process.env.HW_BACKGROUND;
if (!BASE || !PARALLEL || !OUT) throw new Error('set HOOKWATCH_URL, HW_PARALLEL and HOOKWATCH_SCREENSHOTS');

const browser = await launch({ width: 1440, height: 860 });
try {
  const page = await browser.ctx.newPage();
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(BASE + '/#/');
  await page.getByTestId('session-count').filter({ hasText: /^[\d,]+ sessions$/ }).waitFor();
  await page.waitForTimeout(200);
  await page.screenshot({ path: join(OUT, 'dashboard-sessions.png') });

  await page.goto(BASE + '/#/s/' + encodeURIComponent(PARALLEL));
  await page.waitForFunction(() => window.__hw && window.__hw.loading === false && window.__hw.loadedRender);
  const id = await page.evaluate(() => {
    const calls = [...window.__hw.model.calls.values()];
    const c = calls.find((c) => c.status === 'error' && c.tool === 'Bash' && c.agent && /go test/.test(c.input?.command || ''));
    return (c || calls.find((c) => c.status === 'error') || calls[0]).id;
  });
  const rect = await page.evaluate((id) => window.__hw.timeline.rectOf(id), id);
  await page.mouse.click(rect.x + Math.max(1, rect.w / 2), rect.y + rect.h / 2);
  await page.getByTestId('inspector').waitFor();
  await page.mouse.move(1, 300);
  await page.waitForTimeout(200);
  await page.screenshot({ path: join(OUT, 'dashboard-session.png') });
  console.log('saved', join(OUT, 'dashboard-sessions.png'), join(OUT, 'dashboard-session.png'));

  if (BACKGROUND) {
    await page.goto(BASE + '/#/s/' + encodeURIComponent(BACKGROUND));
    await page.waitForFunction(() => window.__hw && window.__hw.loading === false && window.__hw.loadedRender);
    await page.mouse.move(1, 300);
    await page.waitForTimeout(200);
    await page.screenshot({ path: join(OUT, 'dashboard-background.png') });
    console.log('saved', join(OUT, 'dashboard-background.png'));
  }
} finally {
  await browser.close();
}
