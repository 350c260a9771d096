import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { createUser, login } from '../support/users';

let app: TestApp;
let admin: ApiClient;
let controllerId: string;

useTestApp((a, c) => ((app = a), (admin = c)));

describe('controllers', () => {
  it('lists this controller on both APIs', async () => {
    const r = await admin.get('/controllers');
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    controllerId = r.body.data[0].id;
    expect(r.body.data[0]).toMatchObject({ isOnline: true, fingerprint: expect.stringMatching(/^[0-9a-f]{40}$/) });
    expect((await admin.get('/controllers', { api: 'client' })).body.data[0].id).toBe(controllerId);
  });
});

describe('controller settings', () => {
  it('global settings exist and are the effective settings of a controller without its own', async () => {
    const list = await admin.get('/controller-settings');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([expect.objectContaining({ id: 'global', oidc: { redirectUris: [], postLogoutUris: [] } })]);
    const eff = (await admin.get(`/controller-settings/${controllerId}/effective`)).body.data;
    expect(eff).toMatchObject({ id: controllerId, effective: { oidc: { redirectUris: [], postLogoutUris: [] } }, instance: {} });
    expect(eff.instance).toEqual({}); // no settings of its own: no oidc (never null)
    const g = (await admin.get('/controller-settings/global/effective')).body.data;
    expect(g.effective).toEqual(g.instance);

    expect((await admin.patch('/controller-settings/global', { oidc: { redirectUris: ['https://app.example.test/cb'] } })).status).toBe(200);
    expect((await admin.get('/controller-settings/global')).body.data.oidc).toEqual({
      redirectUris: ['https://app.example.test/cb'],
      postLogoutUris: [],
    });
    expect((await admin.get(`/controller-settings/${controllerId}/effective`)).body.data.effective.oidc.redirectUris).toEqual([
      'https://app.example.test/cb',
    ]);
  });

  it('a controller-specific setting overrides what it sets and inherits the rest', async () => {
    const r = await admin.post('/controller-settings', {
      controllerId,
      oidc: { postLogoutUris: ['https://app.example.test/bye'] },
      tags: { site: 'a' },
    });
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ id: controllerId, _links: { self: { href: `./controller-settings/${controllerId}` } } });
    const eff = (await admin.get(`/controller-settings/${controllerId}/effective`)).body.data;
    expect(eff).toMatchObject({
      id: controllerId,
      tags: { site: 'a' },
      effective: { oidc: { redirectUris: ['https://app.example.test/cb'], postLogoutUris: ['https://app.example.test/bye'] } },
      instance: { oidc: { postLogoutUris: ['https://app.example.test/bye'] } },
    });
    expect((await admin.get('/controller-settings')).body.meta.pagination.totalCount).toBe(2);

    // PUT replaces (what it omits inherits again); PATCH, also at OpenZiti's .../effective path, merges
    expect((await admin.put(`/controller-settings/${controllerId}`, { oidc: { redirectUris: ['https://own.example.test/cb'] } })).status).toBe(200);
    expect((await admin.get(`/controller-settings/${controllerId}/effective`)).body.data.effective.oidc).toEqual({
      redirectUris: ['https://own.example.test/cb'],
      postLogoutUris: [],
    });
    expect(
      (await admin.patch(`/controller-settings/${controllerId}/effective`, { oidc: { postLogoutUris: ['https://own.example.test/bye'] } })).status,
    ).toBe(200);
    expect((await admin.get(`/controller-settings/${controllerId}`)).body.data.oidc).toEqual({
      redirectUris: ['https://own.example.test/cb'],
      postLogoutUris: ['https://own.example.test/bye'],
    });
    expect((await admin.patch(`/controller-settings/${controllerId}`, { oidc: { redirectUris: null } })).status).toBe(200);
    expect((await admin.get(`/controller-settings/${controllerId}/effective`)).body.data.effective.oidc.redirectUris).toEqual([
      'https://app.example.test/cb',
    ]);
  });

  it('refuses bad settings; the global settings cannot be deleted; a controller setting can', async () => {
    const bad = async (body: unknown, field: string) => {
      const r = await admin.post('/controller-settings', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.cause.field).toBe(field);
    };
    await bad({ controllerId }, 'controllerId');
    await bad({ controllerId: 'no-such-controller' }, 'controllerId');
    await bad({ controllerId: 'global' }, 'controllerId');
    await bad({}, 'controllerId');
    await bad({ controllerId, oidc: { redirectUris: 'https://x' } }, 'oidc.redirectUris');
    await bad({ controllerId, oidc: { other: [] } }, 'oidc');
    expect((await admin.get('/controller-settings/nope')).status).toBe(404);
    expect((await admin.get('/controller-settings/nope/effective')).status).toBe(404);

    const g = await admin.del('/controller-settings/global');
    expect(g.status).toBe(409);
    expect((await admin.del(`/controller-settings/${controllerId}/effective`)).status).toBe(200);
    expect((await admin.get(`/controller-settings/${controllerId}/effective`)).body.data.instance).toEqual({});
    expect((await admin.get('/controller-settings')).body.data.map((s: any) => s.id)).toEqual(['global']);
  });

  it('needs ops permissions', async () => {
    await createUser(admin, 'settings-nobody', 'settings-password');
    const { client } = await login(app, 'settings-nobody', 'settings-password');
    expect((await client.get('/controller-settings')).status).toBe(401);
    expect((await client.get('/controller-settings/global/effective')).status).toBe(401);
    expect((await client.patch('/controller-settings/global', { oidc: { redirectUris: [] } })).status).toBe(401);
    await client.close();
  });
});
