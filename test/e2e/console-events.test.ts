// The console's live event tail in Chromium: a change made through the REST API appears without a reload (over the
// SSE subscription), its JSON expands; the text filter; the namespace choice goes to the server; Pause holds new
// events back ("N waiting") and Resume shows them; no sideways overflow at 1280×800 and 390 px, and no console error;
// a dropped connection shows "reconnecting" and resumes after the last event seen.
import { Socket } from 'node:net';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, type TestApp } from '../support/app';
import { screenshotBothWidths, unlabelledControls, useConsoleSession } from '../support/consoleBrowser';

describe('console: the live event tail (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  const problems: string[] = [];
  useConsoleSession(async (s) => {
    ({ app, page } = s);
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page: ${e.message}`));
  });

  const state = () => page.getByTestId('events-state').textContent();
  const rows = () => page.getByTestId('event-row');
  const checkbox = (name: string) => page.getByRole('checkbox', { name, exact: true });

  it('tails changes live, filters them, pauses and resumes', async () => {
    const admin = await app.adminClient();
    await page.goto(`${app.urls.console}/#/events`);
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    await page.getByRole('navigation').getByRole('link', { name: 'Events' }).waitFor();
    await expect.poll(state).toBe('live');
    await page.getByText('No events yet').waitFor();
    expect(await unlabelledControls(page)).toEqual([]);

    // a change through REST: its created event and the commit marker, newest first
    await admin.create('/services', { name: 'e2e-tail-svc', encryptionRequired: true });
    const created = rows().filter({ hasText: 'e2e-tail-svc' });
    await created.waitFor();
    await expect.poll(() => rows().nth(0).textContent()).toMatch(/^\d\d:\d\d:\d\d\.\d{3}entityChange\s*committed\s*change \d+/);
    expect(await created.textContent()).toMatch(/entityChange\s*created\s*services e2e-tail-svc \(/);
    await created.getByRole('button', { name: 'JSON' }).click();
    const json = page.locator('pre.code');
    await json.waitFor();
    expect(JSON.parse((await json.textContent())!)).toMatchObject({
      namespace: 'entityChange',
      eventType: 'created',
      finalState: { name: 'e2e-tail-svc' },
    });

    // the text filter searches the events' JSON
    await admin.create('/services', { name: 'e2e-other-svc', encryptionRequired: true });
    await rows().filter({ hasText: 'e2e-other-svc' }).waitFor();
    await page.getByRole('searchbox', { name: 'Filter' }).fill('e2e-tail');
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().first().textContent()).toContain('e2e-tail-svc');
    await page.getByRole('searchbox', { name: 'Filter' }).fill('');
    await screenshotBothWidths(page, 'events');
    await created.getByRole('button', { name: 'Hide JSON' }).click();

    // only API sessions: the choice goes to the server (a new stream), and the view drops the other namespaces
    for (const n of ['entityChange', 'session', 'router', 'terminator', 'authentication']) await checkbox(n).uncheck();
    await expect.poll(state).toBe('live');
    expect(await rows().count()).toBe(0);
    const rest = app.client();
    const session = (await rest.login(ADMIN_USER, ADMIN_PASSWORD)).body.data;
    await admin.create('/services', { name: 'e2e-hidden-svc', encryptionRequired: true });
    await rows().filter({ hasText: session.id }).waitFor();
    // the service came after the login: had it been sent, it would be in by now
    await admin.create('/services', { name: 'e2e-hidden-svc-2', encryptionRequired: true });
    const second = (await rest.login(ADMIN_USER, ADMIN_PASSWORD)).body.data;
    await rows().filter({ hasText: second.id }).waitFor();
    for (const text of await rows().allTextContents()) expect(text).toMatch(/apiSession/);
    await checkbox('entityChange').check();
    await expect.poll(state).toBe('live');

    // paused: events keep coming and wait, counted; resumed: they are shown
    await page.getByRole('button', { name: 'Pause' }).click();
    await admin.create('/services', { name: 'e2e-paused-1', encryptionRequired: true });
    await admin.create('/services', { name: 'e2e-paused-2', encryptionRequired: true });
    // two changes and their commit markers
    await expect.poll(() => page.getByTestId('events-waiting').textContent()).toMatch(/^([4-9]|\d{2,}) waiting$/);
    expect(await rows().filter({ hasText: 'e2e-paused' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => rows().filter({ hasText: 'e2e-paused' }).count()).toBe(2);
    expect(await page.getByTestId('events-waiting').count()).toBe(0);
    // newest first
    const texts = await rows().allTextContents();
    expect(texts.findIndex((t) => t.includes('e2e-paused-2'))).toBeLessThan(texts.findIndex((t) => t.includes('e2e-paused-1')));

    // Clear empties the view; the stream goes on
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByText('No events yet').waitFor();
    await admin.create('/services', { name: 'e2e-after-clear', encryptionRequired: true });
    await rows().filter({ hasText: 'e2e-after-clear' }).waitFor();
    await screenshotBothWidths(page, 'events-after');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
    expect(problems).toEqual([]);

    // the connection drops (the server end of the console's sockets, cut here): "reconnecting", then the browser's
    // EventSource reconnects with the last event's id and the stream resumes after it: a change made meanwhile comes
    const port = Number(new URL(app.urls.console!).port);
    const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
    const sockets = handles.filter((h): h is Socket => h instanceof Socket && h.localPort === port);
    expect(sockets.length).toBeGreaterThan(0);
    for (const socket of sockets) socket.destroy();
    await expect.poll(state).toBe('reconnecting');
    await admin.create('/services', { name: 'e2e-while-away', encryptionRequired: true });
    // (the browser waits a few seconds before it reconnects)
    await rows().filter({ hasText: 'e2e-while-away' }).waitFor({ timeout: 20_000 });
    await expect.poll(state, { timeout: 10_000 }).toBe('live');
    // nothing twice
    expect(await rows().filter({ hasText: 'e2e-after-clear' }).count()).toBe(1);
    expect(await rows().filter({ hasText: 'e2e-while-away' }).count()).toBe(1);
    // (Chromium logs the stream it saw cut, nothing else)
    expect(problems.filter((p) => !p.includes('net::ERR_INCOMPLETE_CHUNKED_ENCODING'))).toEqual([]);
    await Promise.all([rest.close(), admin.close()]);
  });
});
