// JSON editors in the console's forms, in Chromium: while an editor holds text that is not valid JSON (or not what
// its field takes), the form's submit button is disabled with the reason beside it and the form refuses to submit
// (Enter, a script); once fixed, exactly the text typed is stored. Configs (Edit as JSON on create and on edit, a
// property the generated form edits as JSON), config types (a JSON field of a page spec) and a generated page.
import type { Locator, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { screenshotBothWidths, unlabelledControls, useConsoleSession } from '../support/consoleBrowser';

describe('console: JSON editors block submitting until their text is valid (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  let admin: ApiClient;
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);
  const button = (name: string, scope: Pick<Page, 'getByRole'> = page) => scope.getByRole('button', { name, exact: true });
  /** The control a label names (required fields show " *" after the label). */
  const byLabel = (label: string, scope: Pick<Page, 'getByLabel'> = page) =>
    scope.getByLabel(new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\*)?$`));
  const settled = async () => {
    await page.locator('main h1').waitFor();
    await page.locator('main .spinner').first().waitFor({ state: 'detached' });
  };
  const configType = async (name: string) =>
    (await admin.get(`/config-types?filter=${encodeURIComponent(`name = "${name}"`)}`)).body.data[0].id as string;
  const configsNamed = async (name: string) => (await admin.get(`/configs?filter=${encodeURIComponent(`name = "${name}"`)}`)).body.data as unknown[];
  const idFromUrl = () => decodeURIComponent(new URL(page.url()).hash.split('/').pop()!);

  /** The submit button is disabled and says why, beside it and in its description. */
  async function expectBlocked(form: Locator, submit: string, reason: string) {
    await expect.poll(() => button(submit, form).isDisabled()).toBe(true);
    const note = form.locator('.form-actions [role="alert"]');
    expect(await note.innerText()).toBe(reason);
    expect(await note.isVisible()).toBe(true);
    expect(await button(submit, form).getAttribute('aria-describedby')).toBe(await note.getAttribute('id'));
  }
  async function expectSubmittable(form: Locator, submit: string) {
    await expect.poll(() => button(submit, form).isEnabled()).toBe(true);
    expect(await form.locator('.form-actions [role="alert"]').count()).toBe(0);
    expect(await button(submit, form).getAttribute('aria-describedby')).toBeNull();
  }
  /** Submits the form as a script or an Enter would, the button notwithstanding: the handler must refuse. */
  async function expectSubmitRefused(form: Locator, editor: Locator) {
    await form.evaluate((f) => (f as HTMLFormElement).requestSubmit());
    // the handler refuses at once and takes the user to the editor that blocks it
    expect(await editor.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await form.getByText('Saving…').count()).toBe(0);
  }

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    admin = await app.adminClient();
  });

  afterAll(async () => {
    await admin?.close();
  });

  it('Configs → New config → Edit as JSON: invalid JSON disables Create; the config stored is exactly the text typed', async () => {
    await go('/configs');
    await settled();
    await page.getByRole('link', { name: 'New config' }).click();
    const form = page.getByRole('form', { name: 'New config' });
    await form.waitFor();
    await byLabel('Name', form).fill('json-typed');

    // data of one type is not sent under another: choosing a type starts the data afresh
    await byLabel('Config type', form).selectOption({ label: 'host.v1' });
    await form.getByRole('checkbox', { name: 'Edit as JSON' }).check();
    const json = byLabel('Data (JSON)', form);
    await json.fill('{"protocol": "tcp", "address": "10.1.1.1", "port": 22}');
    await byLabel('Config type', form).selectOption({ label: 'intercept.v1' });
    await form.getByRole('checkbox', { name: 'Edit as JSON' }).check();
    expect(JSON.parse(await json.inputValue())).toEqual({});
    expect(await unlabelledControls(page)).toEqual([]);

    // a valid value first (what the old form went on to submit), then broken
    await json.fill('{"protocols": ["tcp"], "addresses": ["first.lab.internal"], "portRanges": [{"low": 80, "high": 80}]}');
    await expectSubmittable(form, 'Create config');
    await json.fill('{"protocols": ["tcp"], "addresses": ["second.lab.internal"], "portRanges": [{"low": 80, "high": 80}]');
    await expectBlocked(form, 'Create config', 'Fix the JSON in Data first.');
    expect(
      await form
        .locator('.field-error')
        .filter({ hasText: /^Not valid JSON/ })
        .isVisible(),
    ).toBe(true);
    expect(await json.getAttribute('aria-invalid')).toBe('true');
    // going back to the generated form would drop the text: not until it is fixed
    expect(await form.getByRole('checkbox', { name: 'Edit as JSON' }).isDisabled()).toBe(true);
    await screenshotBothWidths(page, 'json-editor-blocked');

    // neither Enter in a field nor a script submits it
    await byLabel('Name', form).press('Enter');
    await expectSubmitRefused(form, json);
    expect(await configsNamed('json-typed')).toEqual([]);

    // valid JSON that config data cannot be is refused as well
    await json.fill('["tcp"]');
    await expectBlocked(form, 'Create config', 'Fix the JSON in Data first.');
    expect(await form.locator('.field-error').filter({ hasText: 'Data must be a JSON object' }).isVisible()).toBe(true);
    await json.fill('');
    await expectBlocked(form, 'Create config', 'Fix the JSON in Data first.');

    const typed =
      '{"protocols": ["tcp", "udp"], "addresses": ["typed.lab.internal", "*.typed.internal"], "portRanges": [{"low": 8080, "high": 8090}]}';
    await json.fill(typed);
    await expectSubmittable(form, 'Create config');
    expect(await form.getByRole('checkbox', { name: 'Edit as JSON' }).isEnabled()).toBe(true);
    await button('Create config', form).click();
    await page.getByRole('heading', { name: 'json-typed' }).waitFor();
    const stored = (await admin.get(`/configs/${idFromUrl()}`)).body.data;
    expect(stored.configTypeId).toBe(await configType('intercept.v1'));
    expect(stored.data).toEqual(JSON.parse(typed));
  });

  it('Edit config → Edit as JSON: invalid JSON disables Save; the data saved is exactly the text typed', async () => {
    const id = await admin.create('/configs', {
      name: 'json-edit',
      configTypeId: await configType('intercept.v1'),
      data: { protocols: ['tcp'], addresses: ['before.lab.internal'], portRanges: [{ low: 22, high: 22 }] },
    });
    await go(`/configs/${encodeURIComponent(id)}`);
    await page.getByRole('heading', { name: 'json-edit' }).waitFor();
    await button('Edit').click();
    const form = page.getByRole('form', { name: 'Edit config' });
    await form.waitFor();
    await form.getByRole('checkbox', { name: 'Edit as JSON' }).check();
    const json = byLabel('Data (JSON)', form);
    expect(JSON.parse(await json.inputValue())).toEqual({
      protocols: ['tcp'],
      addresses: ['before.lab.internal'],
      portRanges: [{ low: 22, high: 22 }],
    });

    await json.fill('{"protocols": ["udp"], "addresses": ["after.lab.internal"], "portRanges": [{"low": 53, "high": 53}],}');
    await expectBlocked(form, 'Save', 'Fix the JSON in Data first.');
    await expectSubmitRefused(form, json);
    expect((await admin.get(`/configs/${id}`)).body.data.data.addresses).toEqual(['before.lab.internal']);

    const typed = '{"protocols": ["udp"], "addresses": ["after.lab.internal"], "portRanges": [{"low": 53, "high": 53}]}';
    await json.fill(typed);
    await expectSubmittable(form, 'Save');
    await button('Save', form).click();
    await form.waitFor({ state: 'detached' });
    expect((await admin.get(`/configs/${id}`)).body.data.data).toEqual(JSON.parse(typed));
  });

  it('properties the generated config form edits as JSON block Create while invalid, each named', async () => {
    const typeId = await admin.create('/config-types', {
      name: 'json-open.v1',
      schema: { type: 'object', properties: { note: { type: 'string' }, extra: {}, more: {} } },
    });
    await go('/configs/new');
    const form = page.getByRole('form', { name: 'New config' });
    await form.waitFor();
    await byLabel('Name', form).fill('json-open');
    await byLabel('Config type', form).selectOption(typeId);
    await byLabel('note', form).fill('shown');
    const extra = byLabel('extra', form);
    await extra.fill('{"a": [1, 2');
    await expectBlocked(form, 'Create config', 'Fix the JSON in Data: extra first.');
    // two at once: both are named, and the form waits for both
    await byLabel('more', form).fill('tru');
    await expectBlocked(form, 'Create config', 'Fix the JSON in Data: extra and Data: more first.');
    await expectSubmitRefused(form, extra);
    await extra.fill('{"a": [1, 2], "b": null}');
    await expectBlocked(form, 'Create config', 'Fix the JSON in Data: more first.');
    await byLabel('more', form).fill('true');
    await expectSubmittable(form, 'Create config');
    await button('Create config', form).click();
    await page.getByRole('heading', { name: 'json-open' }).waitFor();
    expect((await admin.get(`/configs/${idFromUrl()}`)).body.data.data).toEqual({ note: 'shown', extra: { a: [1, 2], b: null }, more: true });
  });

  it('Config types → New config type: an invalid JSON schema disables Create; the schema stored is the text typed', async () => {
    await go('/config-types/new');
    const form = page.getByRole('form', { name: 'New config type' });
    await form.waitFor();
    await byLabel('Name', form).fill('json-schema-typed');
    const schema = byLabel('JSON schema', form);
    await schema.fill('{"type": "object", "properties": {"port": {"type": "integer"}}');
    await expectBlocked(form, 'Create config type', 'Fix the JSON in JSON schema first.');
    await byLabel('Name', form).press('Enter');
    await expectSubmitRefused(form, schema);
    expect((await admin.get(`/config-types?filter=${encodeURIComponent('name = "json-schema-typed"')}`)).body.data).toEqual([]);

    const typed = '{"type": "object", "properties": {"port": {"type": "integer", "minimum": 1}}, "required": ["port"]}';
    await schema.fill(typed);
    await expectSubmittable(form, 'Create config type');
    await button('Create config type', form).click();
    await page.getByRole('heading', { name: 'json-schema-typed' }).waitFor();
    expect((await admin.get(`/config-types/${idFromUrl()}`)).body.data.schema).toEqual(JSON.parse(typed));
  });

  it('a generated page (/generic/config-types): an invalid JSON field disables Save on edit', async () => {
    const id = await admin.create('/config-types', { name: 'json-generic', schema: { type: 'object' } });
    await go(`/generic/config-types/${encodeURIComponent(id)}`);
    await page.getByRole('heading', { name: 'json-generic' }).waitFor();
    await button('Edit').click();
    const form = page.getByRole('form', { name: 'Edit config type' });
    await form.waitFor();
    const schema = byLabel('Schema', form);
    await schema.fill('{"type": "object"');
    await expectBlocked(form, 'Save', 'Fix the JSON in Schema first.');
    await expectSubmitRefused(form, schema);
    const typed = '{"type": "object", "properties": {"host": {"type": "string"}}}';
    await schema.fill(typed);
    await expectSubmittable(form, 'Save');
    await button('Save', form).click();
    await form.waitFor({ state: 'detached' });
    expect((await admin.get(`/config-types/${id}`)).body.data.schema).toEqual(JSON.parse(typed));
  });
});
