// The console pages for external JWT signers, terminators, controller settings and Dial/Bind sessions, the identity
// detail's posture data, failed service requests, tracing and service config overrides, and the structured posture
// check forms — in Chromium, against a small network built over the Management and Client APIs. Field errors from
// the server land at their field. Saves a screenshot of every new page, at 1280×800 and at a phone's width.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { SCREENSHOTS as SHOTS, screenshotBothWidths, useConsoleSession, unlabelledControls } from '../support/consoleBrowser';
import type { ApiClient } from '../support/client';
import { externalCa } from '../support/pki';
import { createUser } from '../support/users';

describe('console: signers, terminators, settings, sessions, identity posture and tracing, posture checks (Chromium)', () => {
  let app: TestApp;
  let admin: ApiClient;
  let page: Page;
  /** carol: a user with a Client API session, a Dial policy for "intranet" and one (posture-checked) for "payroll" */
  const net = { carol: '', intranet: '', payroll: '', router: '', client: undefined as ApiClient | undefined };

  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);
  /** console-<name>.png at 1280×800 and console-<name>-390.png (nothing overflowing sideways at 390 px) */
  const shot = (name: string) => screenshotBothWidths(page, name);
  /** one screenshot at the current (narrow) viewport, for the flows that only exist there (the menu) */
  const narrowShot = (name: string) => page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: true });
  const field = (name: string) => page.getByRole('textbox', { name, exact: true });
  const select = (name: string) => page.getByRole('combobox', { name, exact: true });
  const button = (name: string) => page.getByRole('button', { name, exact: true });
  /** The control a label names (required fields show " *" after the label). */
  const byLabel = (label: string, scope: Pick<Page, 'getByLabel'> = page) =>
    scope.getByLabel(new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\*)?$`));
  /** Types a value into a chips list and adds it. */
  async function addChip(label: string, value: string, scope: Pick<Page, 'getByLabel'> = page) {
    await byLabel(label, scope).fill(value);
    await byLabel(label, scope).press('Enter');
  }
  /** The error shown at a field: its text, and the field marked invalid. */
  async function expectFieldError(label: string, reason: string | RegExp) {
    await page.locator('.field-error').filter({ hasText: reason }).first().waitFor();
    await expect.poll(() => byLabel(label).getAttribute('aria-invalid')).toBe('true');
  }
  const settled = async () => {
    await page.locator('main h1').waitFor();
    await page.locator('main .spinner').first().waitFor({ state: 'detached' });
  };

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    admin = await app.adminClient();

    // the small network: carol may dial intranet (no posture checks) and payroll (behind a DOMAIN check)
    net.carol = await createUser(admin, 'carol', 'carol-password-1', { roleAttributes: ['ops'] });
    net.intranet = await admin.create('/services', { name: 'intranet', encryptionRequired: true, roleAttributes: ['ops'] });
    net.payroll = await admin.create('/services', { name: 'payroll', encryptionRequired: true, roleAttributes: ['pay'] });
    net.router = await admin.create('/edge-routers', { name: 'er-sessions' });
    await app.core.store.runSql('UPDATE edge_routers SET is_online = 1 WHERE id = ?', net.router);
    await admin.create('/posture-checks', { name: 'corp-domain', typeId: 'DOMAIN', domains: ['corp.test'], roleAttributes: ['corp'] });
    await admin.create('/service-policies', { name: 'ops-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#ops'], serviceRoles: ['#ops'] });
    await admin.create('/service-policies', {
      name: 'pay-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#ops'],
      serviceRoles: ['#pay'],
      postureCheckRoles: ['#corp'],
    });
    await admin.create('/edge-router-policies', { name: 'all-routers', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
    await admin.create('/service-edge-router-policies', {
      name: 'all-services',
      semantic: 'AnyOf',
      serviceRoles: ['#all'],
      edgeRouterRoles: ['#all'],
    });
    net.client = app.client();
    const auth = await net.client.post('/authenticate?method=password', { username: 'carol', password: 'carol-password-1' }, { api: 'client' });
    net.client.token = auth.body.data.token;
  });

  afterAll(async () => {
    await net.client?.close();
    await admin?.close();
  });

  it('creates an external JWT signer with a JWKS URL (every field); a bad URL is shown at its field', async () => {
    await go('/external-jwt-signers/new');
    await settled();
    expect(await unlabelledControls(page)).toEqual([]);
    await field('Name').fill('corp-idp');
    await byLabel('Issuer (iss)').fill('https://idp.corp.test');
    await byLabel('Audience (aud)').fill('weft');
    // JWKS is the default choice: the certificate field is not offered with it
    expect(await page.getByRole('radio', { name: 'JWKS endpoint (keys fetched from a URL)' }).isChecked()).toBe(true);
    expect(await byLabel('Signing certificate (PEM)').count()).toBe(0);
    await byLabel('JWKS endpoint URL').fill('idp.corp.test/keys');
    await button('Create external JWT signer').click();
    await expectFieldError('JWKS endpoint URL', 'must be an http(s) URL');
    await shot('ext-jwt-signer-error');

    await byLabel('JWKS endpoint URL').fill('https://idp.corp.test/.well-known/jwks.json');
    await byLabel('Claim naming the identity').fill('email');
    await page.getByRole('checkbox', { name: /external ID/ }).check();
    await page.getByRole('radio', { name: 'ID token' }).check();
    await byLabel('OAuth client ID').fill('weft-console');
    await addChip('Scopes', 'openid');
    await addChip('Scopes', 'email');
    await byLabel('External authentication URL').fill('https://idp.corp.test/authorize');
    await page.getByRole('checkbox', { name: 'Enroll to token authentication with a JWT of this signer' }).check();
    await byLabel('Claim for the new identity’s name').fill('/name');
    await byLabel('Claim for the new identity’s role attributes').fill('/groups');
    await select('Auth policy of enrolled identities').selectOption({ label: 'Default' });
    await shot('ext-jwt-signer-new');
    await button('Create external JWT signer').click();
    await page.getByRole('heading', { name: 'corp-idp' }).waitFor();
    await page.getByText('JWKS: https://idp.corp.test/.well-known/jwks.json').waitFor();

    const rest = (await admin.get(`/external-jwt-signers?filter=${encodeURIComponent('name = "corp-idp"')}`)).body.data[0];
    expect(rest).toMatchObject({
      issuer: 'https://idp.corp.test',
      audience: 'weft',
      enabled: true,
      jwksEndpoint: 'https://idp.corp.test/.well-known/jwks.json',
      certPem: null,
      claimsProperty: 'email',
      useExternalId: true,
      targetToken: 'ID',
      clientId: 'weft-console',
      scopes: ['openid', 'email'],
      externalAuthUrl: 'https://idp.corp.test/authorize',
      enrollToCertEnabled: false,
      enrollToTokenEnabled: true,
      enrollNameClaimsSelector: '/name',
      enrollAttributeClaimsSelector: '/groups',
      enrollAuthPolicyId: 'default',
    });

    await go('/external-jwt-signers');
    const table = page.getByRole('table', { name: 'External JWT signers' });
    await table.getByRole('link', { name: 'corp-idp' }).waitFor();
    await table.getByRole('cell', { name: 'JWKS' }).waitFor();
    await shot('ext-jwt-signers');
  });

  it('a signer with a certificate shows its fingerprint, common name and validity; editing switches it to JWKS', async () => {
    const ca = await externalCa('Partner Signing');
    await go('/external-jwt-signers/new');
    await field('Name').fill('partner-idp');
    await byLabel('Issuer (iss)').fill('https://partner.test');
    await byLabel('Audience (aud)').fill('weft');
    await page.getByRole('radio', { name: 'Certificate (one PEM)' }).check();
    expect(await byLabel('JWKS endpoint URL').count()).toBe(0);
    await byLabel('Signing certificate (PEM)').fill(ca.certPem);
    await button('Create external JWT signer').click();
    await page.getByRole('heading', { name: 'partner-idp' }).waitFor();
    const rest = (await admin.get(`/external-jwt-signers?filter=${encodeURIComponent('name = "partner-idp"')}`)).body.data[0];
    const certificate = page.getByRole('region', { name: 'Certificate' });
    await certificate.getByText(rest.fingerprint).waitFor();
    await certificate.getByText('Partner Signing').waitFor();
    await certificate.getByText(new Date(rest.notAfter).toLocaleString()).waitFor();
    await shot('ext-jwt-signer-certificate');

    await button('Edit').click();
    await page.getByRole('radio', { name: 'JWKS endpoint (keys fetched from a URL)' }).check();
    await byLabel('JWKS endpoint URL').fill('https://partner.test/jwks');
    await button('Save').click();
    await page.getByText('JWKS: https://partner.test/jwks').waitFor();
    expect(await certificate.count()).toBe(0);
    expect((await admin.get(`/external-jwt-signers/${rest.id}`)).body.data).toMatchObject({
      certPem: null,
      fingerprint: '',
      jwksEndpoint: 'https://partner.test/jwks',
    });

    // auth policies pick allowed signers by name
    await go('/auth-policies/new');
    // the form starts from the core's default policy (the registry's initial body)
    expect(await page.getByLabel('Allow username/password logins').isChecked()).toBe(true);
    await select('Allowed JWT signers (none = any)').selectOption({ label: 'partner-idp' });
    await page.getByRole('list', { name: 'Chosen' }).getByText('partner-idp').waitFor();
    expect(await select('Require a JWT of this signer as second factor').locator('option', { hasText: 'corp-idp' }).count()).toBe(1);
  });

  it('adds a terminator to a service (a bad cost shown at the field); the service detail lists it', async () => {
    await go('/terminators/new');
    await settled();
    expect(await unlabelledControls(page)).toEqual([]);
    await select('Service').selectOption({ label: 'intranet' });
    expect(await page.getByRole('radio', { name: 'Edge router' }).isChecked()).toBe(true);
    await select('Router').selectOption({ label: 'er-sessions' });
    await byLabel('Binding').fill('transport');
    await byLabel('Address').fill('tcp:10.0.0.5:443');
    await byLabel('Cost (0–65535)').fill('70000');
    await button('Create terminator').click();
    await expectFieldError('Cost (0–65535)', 'must be between 0 and 65535');
    await byLabel('Cost (0–65535)').fill('10');
    await select('Precedence').selectOption('required');
    await shot('terminator-new');
    await button('Create terminator').click();
    await page.getByRole('button', { name: 'Edit' }).waitFor();
    const rest = (await admin.get(`/services/${net.intranet}/terminators`)).body.data;
    expect(rest).toEqual([
      expect.objectContaining({ binding: 'transport', address: 'tcp:10.0.0.5:443', cost: 10, precedence: 'required', routerId: net.router }),
    ]);
    await shot('terminator-detail');

    await go('/terminators');
    const all = page.getByRole('table', { name: 'Terminators' });
    await all.getByRole('cell', { name: 'tcp:10.0.0.5:443' }).waitFor();
    await all.getByRole('link', { name: 'intranet' }).waitFor(); // the service's name, looked up for the row
    await shot('terminators');

    await go(`/services/${net.intranet}`);
    const onService = page.getByRole('table', { name: 'Terminators of intranet' });
    await onService.getByRole('cell', { name: 'tcp:10.0.0.5:443' }).waitFor();
    await onService.getByRole('link', { name: 'er-sessions' }).waitFor();
    await shot('service-terminators');
  });

  it('edits the global controller settings and a controller override; the effective view follows', async () => {
    const controller = (await admin.get('/controllers')).body.data[0];
    await go('/controller-settings');
    await page.getByRole('table', { name: 'Controller settings' }).getByRole('link', { name: 'Global' }).click();
    await page.getByRole('heading', { name: 'global' }).waitFor();
    const effective = page.getByRole('region', { name: 'Effective settings' });
    await effective.getByText('none').first().waitFor();
    await button('Edit').click();
    expect(await page.getByRole('checkbox', { name: /Override/ }).count()).toBe(0); // the global settings hold values
    await addChip('OIDC redirect URIs', 'https://app.test/callback');
    await button('Save').click();
    await effective.getByText('https://app.test/callback').waitFor();
    await shot('controller-settings-global');

    await go('/controller-settings/new');
    await settled();
    expect(await unlabelledControls(page)).toEqual([]);
    await select('Controller').selectOption({ label: controller.name });
    await page.getByRole('checkbox', { name: 'Override the global post-logout URIs' }).check();
    await addChip('OIDC post-logout URIs', 'https://app.test/bye');
    await button('Create controller setting').click();
    await page.getByRole('heading', { name: controller.id }).waitFor();
    // redirect URIs inherited from the global settings, post-logout URIs its own
    const redirect = effective.locator('dd').nth(0);
    const logout = effective.locator('dd').nth(1);
    await redirect.getByText('https://app.test/callback').waitFor();
    await redirect.getByText('from the global settings').waitFor();
    await logout.getByText('https://app.test/bye').waitFor();
    await logout.getByText('set here').waitFor();
    expect((await admin.get(`/controller-settings/${controller.id}/effective`)).body.data.effective.oidc).toEqual({
      redirectUris: ['https://app.test/callback'],
      postLogoutUris: ['https://app.test/bye'],
    });
    await shot('controller-settings-override');

    // overriding the redirect URIs too (with none) changes the effective view
    await button('Edit').click();
    await page.getByRole('checkbox', { name: 'Override the global redirect URIs' }).check();
    await button('Save').click();
    await redirect.getByText('set here').waitFor();
    await redirect.getByText('none').waitFor();
    expect((await admin.get(`/controller-settings/${controller.id}/effective`)).body.data.effective.oidc.redirectUris).toEqual([]);

    await go('/controller-settings');
    await select('Controller').selectOption({ label: controller.name });
    await page.getByRole('region', { name: 'Effective settings of a controller' }).getByText('https://app.test/bye').waitFor();
    await shot('controller-settings');
    await go(`/controllers/${controller.id}`);
    await page.getByRole('region', { name: 'Effective settings' }).getByText('https://app.test/bye').waitFor();
    await shot('controller-detail');
  });

  it('shows a Dial session opened over the Client API with its service, identity and edge routers, and deletes it', async () => {
    const created = await net.client!.post('/sessions', { serviceId: net.intranet, type: 'Dial' }, { api: 'client' });
    expect(created.status).toBe(201);
    const session = created.body.data;
    await go('/sessions');
    const table = page.getByRole('table', { name: 'Sessions' });
    const row = table.locator('tbody tr').filter({ hasText: session.id });
    await row.getByRole('link', { name: 'intranet' }).waitFor();
    await row.getByRole('link', { name: 'carol' }).waitFor();
    await row.getByRole('cell', { name: 'er-sessions' }).waitFor();
    await row.getByRole('link', { name: session.apiSessionId }).waitFor();
    expect(await page.locator('main').textContent()).not.toContain(session.token);
    await page.getByLabel('Filter').fill(`type = "Bind"`);
    await table.getByText('Nothing matches the filter.').waitFor();
    await page.getByLabel('Filter').fill(`identityId = "${net.carol}"`);
    await row.waitFor();
    await shot('sessions');

    await row.getByRole('button', { name: 'Delete' }).click();
    await button('Delete the Dial session for intranet').click();
    await table.getByText('Nothing matches the filter.').waitFor();
    expect((await net.client!.get(`/sessions/${session.id}`, { api: 'client' })).status).toBe(404);
  });

  it('the identity detail shows posture data and the failed request of a session refused by a posture check', async () => {
    const response = await net.client!.post('/posture-response', { id: 'domain-check', typeId: 'DOMAIN', domain: 'home.test' }, { api: 'client' });
    expect(response.status).toBe(201);
    const refused = await net.client!.post('/sessions', { serviceId: net.payroll, type: 'Dial' }, { api: 'client' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('INVALID_POSTURE');

    await go(`/identities/${net.carol}`);
    await page.getByRole('heading', { name: 'carol' }).waitFor();
    const posture = page.getByRole('region', { name: 'Posture data' });
    await posture.getByText('home.test').waitFor();
    const failed = page.getByRole('table', { name: 'Failed service requests' });
    const row = failed.locator('tbody tr').first();
    await row.getByRole('link', { name: 'payroll' }).waitFor();
    await row.getByRole('cell', { name: 'Dial', exact: true }).waitFor();
    await row.getByRole('link', { name: 'pay-dial' }).waitFor();
    await row.getByText('corp-domain (DOMAIN) expected ["corp.test"], got home.test').waitFor();
    await shot('identity-posture');
  });

  it('starts data flow tracing with a duration and channels (a bad duration shown at the field) and stops it', async () => {
    await go(`/identities/${net.carol}`);
    const tracing = page.getByRole('region', { name: 'Data flow tracing' });
    await tracing.getByText('Tracing is off.').waitFor();
    await byLabel('Duration', tracing).fill('soon');
    await tracing.getByRole('button', { name: 'Start tracing' }).click();
    await tracing.locator('.field-error').filter({ hasText: 'invalid duration' }).waitFor();
    await expect.poll(() => byLabel('Duration', tracing).getAttribute('aria-invalid')).toBe('true');

    await byLabel('Duration', tracing).fill('30m');
    await addChip('Channels (none = all)', 'edge', tracing);
    await tracing.getByRole('button', { name: 'Start tracing' }).click();
    await tracing.getByText(/Tracing is on until .*channels: edge/).waitFor();
    const on = (await admin.get(`/identities/${net.carol}/trace`)).body.data;
    expect(on).toMatchObject({ enabled: true, channels: ['edge'] });
    expect(Date.parse(on.until) - Date.now()).toBeGreaterThan(25 * 60_000);
    await shot('identity-tracing');

    await tracing.getByRole('button', { name: 'Stop tracing' }).click();
    await tracing.getByText('Tracing is off.').waitFor();
    expect((await admin.get(`/identities/${net.carol}/trace`)).body.data.enabled).toBe(false);
  });

  it('associates and removes a service config override of an identity', async () => {
    const types = (await admin.get(`/config-types?filter=${encodeURIComponent('name = "host.v1"')}`)).body.data;
    await admin.create('/configs', { name: 'carol-host', configTypeId: types[0].id, data: { protocol: 'tcp', address: '10.9.9.9', port: 22 } });
    await go(`/identities/${net.carol}`);
    await page.reload(); // the page is still open from the last test: load the new config into its choices
    const panel = page.getByRole('region', { name: 'Service config overrides' });
    await panel.getByText('No overrides').waitFor();
    await panel.getByRole('button', { name: 'Add override' }).click();
    await panel.locator('.field-error').first().waitFor(); // nothing chosen: the server names the field
    await panel.getByRole('combobox', { name: 'Service', exact: true }).selectOption({ label: 'intranet' });
    await panel.getByRole('combobox', { name: 'Config (replaces the service’s config of its type)' }).selectOption({ label: 'carol-host' });
    await panel.getByRole('button', { name: 'Add override' }).click();
    const table = panel.getByRole('table', { name: 'Service config overrides' });
    await table.getByRole('link', { name: 'carol-host' }).waitFor();
    expect((await admin.get(`/identities/${net.carol}/service-configs`)).body.data).toEqual([expect.objectContaining({ serviceId: net.intranet })]);
    await shot('identity-service-configs');
    await table.getByRole('button', { name: 'Remove' }).click();
    await button('Remove override carol-host for intranet').click();
    await panel.getByText('No overrides').waitFor();
    expect((await admin.get(`/identities/${net.carol}/service-configs`)).body.data).toEqual([]);
  });

  it('creates a posture check of every type through its structured form', async () => {
    const created = async (name: string) => {
      await page.getByRole('heading', { name }).waitFor();
      return (await admin.get(`/posture-checks?filter=${encodeURIComponent(`name = "${name}"`)}`)).body.data[0];
    };
    const start = async (name: string, type: string) => {
      await go('/posture-checks/new');
      await field('Name').fill(name);
      await select('Type').selectOption(type);
    };
    const create = () => button('Create posture check').click();

    await start('os-check', 'OS');
    await create();
    await page.locator('.field-error').filter({ hasText: 'must contain at least one operating system' }).waitFor();
    await button('Add operating system').click();
    await button('Add operating system').click();
    const os1 = page.getByRole('group', { name: 'Operating system 1' });
    await byLabel('Operating system', os1).selectOption('Linux');
    await addChip('Versions (semver ranges; none = any)', '>=5.10.0', os1);
    await byLabel('Operating system', page.getByRole('group', { name: 'Operating system 2' })).selectOption('Windows');
    expect(await unlabelledControls(page)).toEqual([]);
    await shot('posture-check-os');
    await create();
    expect(await created('os-check')).toMatchObject({
      typeId: 'OS',
      operatingSystems: [
        { type: 'Linux', versions: ['>=5.10.0'] },
        { type: 'Windows', versions: [] },
      ],
    });

    await start('process-check', 'PROCESS');
    await byLabel('Operating system').selectOption('macOS');
    await byLabel('Path').fill('/Applications/Agent.app');
    await addChip('SHA-512 hashes of the binary (none = any)', 'ab12');
    await byLabel('Signer certificate fingerprint').fill('ff00');
    await shot('posture-check-process');
    await create();
    expect(await created('process-check')).toMatchObject({
      typeId: 'PROCESS',
      process: { osType: 'macOS', path: '/Applications/Agent.app', hashes: ['ab12'], signerFingerprint: 'ff00' },
    });

    await start('multi-check', 'PROCESS_MULTI');
    await page.getByRole('radio', { name: 'AnyOf — one is enough' }).check();
    await button('Add process').click();
    await button('Add process').click();
    const p1 = page.getByRole('group', { name: 'Process 1' });
    const p2 = page.getByRole('group', { name: 'Process 2' });
    await byLabel('Operating system', p1).selectOption('Windows');
    await byLabel('Path', p1).fill('C:\\agent.exe');
    await addChip('Signer fingerprints (none = any)', 'aa11', p1);
    await byLabel('Operating system', p2).selectOption('Windows');
    await create();
    await expect.poll(() => byLabel('Path', p2).getAttribute('aria-invalid')).toBe('true'); // processes.1.path
    await byLabel('Path', p2).fill('C:\\vpn.exe');
    await addChip('SHA-512 hashes (none = any)', '01ff', p2);
    await shot('posture-check-process-multi');
    await create();
    expect(await created('multi-check')).toMatchObject({
      typeId: 'PROCESS_MULTI',
      semantic: 'AnyOf',
      processes: [
        { osType: 'Windows', path: 'C:\\agent.exe', signerFingerprints: ['aa11'] },
        { osType: 'Windows', path: 'C:\\vpn.exe', hashes: ['01ff'] },
      ],
    });

    await start('mac-check', 'MAC');
    await addChip('MAC addresses', 'AA:BB:CC:DD:EE:FF');
    await create();
    expect(await created('mac-check')).toMatchObject({ typeId: 'MAC', macAddresses: ['AA:BB:CC:DD:EE:FF'] });

    await start('domain-check', 'DOMAIN');
    await addChip('Windows domains', 'corp.test');
    await create();
    expect(await created('domain-check')).toMatchObject({ typeId: 'DOMAIN', domains: ['corp.test'] });

    await start('mfa-check', 'MFA');
    await byLabel('MFA timeout in seconds (-1 = never)').fill('600');
    await page.getByRole('checkbox', { name: 'Prompt for MFA when the device wakes' }).check();
    await page.getByRole('checkbox', { name: /Ignore legacy endpoints/ }).check();
    await shot('posture-check-mfa');
    await create();
    const mfa = await created('mfa-check');
    expect(mfa).toMatchObject({ typeId: 'MFA', timeoutSeconds: 600, promptOnWake: true, promptOnUnlock: false, ignoreLegacyEndpoints: true });

    // editing goes through the same structured fields (PATCH; the version goes up)
    await button('Edit').click();
    await page.getByRole('checkbox', { name: 'Prompt for MFA when the device is unlocked' }).check();
    await button('Save').click();
    // the editor closes once the save is done ("Save" reads "Saving…" while it runs, so wait for the editor itself)
    await page.getByRole('button', { name: 'Edit', exact: true, expanded: false }).waitFor();
    expect((await admin.get(`/posture-checks/${mfa.id}`)).body.data).toMatchObject({ version: 2, promptOnUnlock: true, timeoutSeconds: 600 });

    await go('/posture-checks');
    const table = page.getByRole('table', { name: 'Posture checks' });
    await table.getByRole('cell', { name: 'Linux >=5.10.0, Windows' }).waitFor();
    await shot('posture-checks');
  });

  it('every new page renders (screenshots), also at a narrow width', async () => {
    const pages = [
      'external-jwt-signers',
      'external-jwt-signers/new',
      'terminators',
      'terminators/new',
      'sessions',
      'controllers',
      'controller-settings',
      'controller-settings/new',
      'posture-checks/new',
      `identities/${net.carol}`,
    ];
    for (const p of pages) {
      await go(`/${p}`);
      await settled();
      await shot(`page-${p.replace(/\//g, '-').replace(net.carol, 'detail')}`);
    }
    await page.setViewportSize({ width: 390, height: 800 });
    for (const p of ['external-jwt-signers/new', 'terminators', 'controller-settings', `identities/${net.carol}`]) {
      await go(`/${p}`);
      await settled();
      // nothing wider than the screen but the scrolling tables
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await narrowShot(`narrow-${p.replace(/\//g, '-').replace(net.carol, 'detail')}`);
    }
    await button('Menu').click();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Sessions', exact: true }).click();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    await narrowShot('narrow-sessions');
  });
});
