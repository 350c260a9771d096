// The console's Metrics page in Chromium: the metrics URL, and the last hour's charts once a sample has been taken
// (an injected clock moves the 10 s on): requests per second, failed logins and the rest; every control labelled;
// no sideways overflow at 1280×800 and 390 px; no console error.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { SAMPLE_MS } from '../../src/main/metrics/history';
import type { TestApp } from '../support/app';
import { ManualClock } from '../support/clock';
import { screenshotBothWidths, unlabelledControls, useConsoleSession } from '../support/consoleBrowser';

// the core renews certificates by this clock and the browser checks them against the real one: it starts now
const clock = new ManualClock(new Date(Math.floor(Date.now() / 60_000) * 60_000));

describe('console: metrics (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  const problems: string[] = [];
  useConsoleSession(
    async (s) => {
      ({ app, page } = s);
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`page: ${e.message}`));
    },
    { clock },
  );

  it('shows the metrics URL and charts the samples of the last hour', async () => {
    await page.goto(`${app.urls.console}/#/metrics`);
    await page.getByRole('heading', { name: 'Metrics' }).waitFor();
    expect(await page.getByTestId('metrics-url').textContent()).toBe(app.urls.metrics);
    await page.getByText('No samples yet').waitFor();

    const admin = await app.adminClient();
    for (let i = 0; i < 20; i++) expect((await admin.get('/identities?limit=1')).status).toBe(200);
    expect((await app.client().post('/authenticate?method=password', { username: 'nobody', password: 'wrong-password' })).status).toBe(401);
    await admin.close();
    clock.advance(SAMPLE_MS);
    app.metricHistory!.sample();

    await page.reload();
    const charts = page.getByTestId('metric-chart');
    await expect.poll(() => charts.count()).toBe(6);
    const chart = (name: string) => page.getByRole('figure', { name });
    // at least the 20 lists and the login over 10 s
    expect(Number.parseFloat((await chart('API requests per second').getByTestId('metric-now').textContent())!)).toBeGreaterThanOrEqual(2.1);
    expect(await chart('Failed logins per 10 s').getByTestId('metric-now').textContent()).toBe('1');
    expect(await unlabelledControls(page)).toEqual([]);
    await screenshotBothWidths(page, 'metrics');
    expect(problems).toEqual([]);
  });
});
