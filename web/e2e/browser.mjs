// Starting Chromium for the browser tests and the benchmark: Debian's
// package (Playwright cannot download its own browsers here), headless, no
// background traffic, and a fresh profile every time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.HOOKWATCH_CHROMIUM || '/usr/bin/chromium';

/** launch returns a browser context and its close(). */
export async function launch({ width = 1440, height = 900 } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'hookwatch-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width, height },
    deviceScaleFactor: 1,
    timezoneId: 'UTC',
    locale: 'en-US',
  });
  return {
    ctx,
    close: async () => {
      await ctx.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
