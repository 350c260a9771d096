// `npm install && npm test` needs no system Chromium: without one, the browser tests use the Chromium that the
// @sparticuz/chromium devDependency ships in its npm package.
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumExecutable, launchChromium } from '../support/browser';

describe('browser tests without a system Chromium', () => {
  const saved = process.env.WEFT_SYSTEM_CHROMIUM;
  beforeAll(() => {
    process.env.WEFT_SYSTEM_CHROMIUM = '/nonexistent/chromium';
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.WEFT_SYSTEM_CHROMIUM;
    else process.env.WEFT_SYSTEM_CHROMIUM = saved;
  });

  it('drive the Chromium from the npm package', { timeout: 120_000 }, async () => {
    expect(await chromiumExecutable()).not.toBe('/nonexistent/chromium');
    const server = createServer((_req, res) => res.end('<h1>from the bundled Chromium</h1>'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.goto(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
      expect(await page.textContent('h1')).toBe('from the bundled Chromium');
    } finally {
      await browser.close();
      server.close();
    }
  });
});
