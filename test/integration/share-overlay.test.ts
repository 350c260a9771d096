// Overlay shares: `weft share public --overlay` binds the share's service through the built-in edge router with
// Weft's own SDK and serves the target; the frontend dials it through the router (OAuth unchanged). `--remote`
// prints a share grant, and `weft share host <grant>` hosts the share with nothing but the grant and the router port.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeGrant, encodeGrant } from '../../src/main/share/grant';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import { HttpUserAgent, loopbackDispatcher, type EchoBackend } from '../support/browser';
import type { ApiClient } from '../support/client';
import { eventually, tcpRelay } from '../support/overlay';
import { frontendSection, MemoryShareIo, runShare, shareUrl, startWeftShare, useShareApp, writeConfigFile } from '../support/shares';
import { runShareCommand } from '../../src/main/share/shareCommand';

let app: TestApp;
let admin: ApiClient;
let backend: EchoBackend;
const agent = new HttpUserAgent();
const dispatcher = loopbackDispatcher();

useShareApp((s) => ({ app, admin, backend } = s));
afterAll(() => dispatcher.close());

const byName = async (path: string, name: string) => (await admin.get(`${path}?filter=${encodeURIComponent(`name = "${name}"`)}`)).body.data as any[];

/** What an overlay share with this token consists of (names as createOverlayShare makes them). */
async function overlayParts(token: string) {
  const name = `share-${token}`;
  return {
    configs: await byName('/configs', name),
    services: await byName('/services', name),
    identities: await byName('/identities', name),
    servicePolicies: [...(await byName('/service-policies', `${name}-bind`)), ...(await byName('/service-policies', `${name}-dial`))],
    edgeRouterPolicies: await byName('/edge-router-policies', name),
    serviceEdgeRouterPolicies: await byName('/service-edge-router-policies', name),
  };
}

function site(files: Record<string, string>): string {
  const dir = tempDir('weft-site-');
  for (const [f, body] of Object.entries(files)) writeFileSync(join(dir, f), body);
  return dir;
}

describe('weft share public --overlay', () => {
  it('proxy: the frontend reaches the target only through the router; everything the share made is removed with it', async () => {
    const share = await runShare(['public', `${backend.url}/base`, '--backend-mode', 'proxy', '--overlay'], app.dataDir);
    try {
      expect(share.io.lines[0]).toBe(`Sharing ${backend.url}/base (backend mode proxy, through the overlay)`);
      const parts = await overlayParts(share.token);
      expect(parts.configs).toMatchObject([{ data: { token: share.token, backendMode: 'proxy', overlay: true }, tags: { 'weft.share': true } }]);
      expect(parts.services).toMatchObject([{ encryptionRequired: false, tags: { 'weft.share': true } }]);
      expect(parts.identities).toMatchObject([{ isAdmin: false, tags: { 'weft.share': true } }]);
      const frontendId = JSON.parse(readFileSync(join(app.dataDir, 'runtime.json'), 'utf8')).overlay.frontendIdentityId;
      const serviceRole = `@${parts.services[0].id}`;
      expect(parts.servicePolicies.map((p) => [p.type, p.identityRoles, p.serviceRoles]).sort()).toEqual([
        ['Bind', [`@${parts.identities[0].id}`], [serviceRole]],
        ['Dial', [`@${frontendId}`], [serviceRole]],
      ]);
      expect(parts.edgeRouterPolicies[0].edgeRouterRoles).toEqual([`@${app.router!.id}`]);
      expect(parts.serviceEdgeRouterPolicies[0]).toMatchObject({ serviceRoles: [serviceRole], edgeRouterRoles: [`@${app.router!.id}`] });
      expect(app.router!.status().terminators).toContainEqual(
        expect.objectContaining({ serviceId: parts.services[0].id, caller: `share-${share.token}` }),
      );

      const seen = backend.requests.length;
      const res = await agent.request(`${share.url}hello?x=1`, { headers: { 'svc-auth-email': 'spoofed@evil.test', 'x-forwarded-for': '10.6.6.6' } });
      expect(res.status).toBe(200);
      const echoed = res.json();
      expect(echoed.url).toBe('/base/hello?x=1');
      expect(echoed.headers['svc-auth-email']).toBeUndefined();
      expect(echoed.headers['x-forwarded-for']).toBe('127.0.0.1');
      expect(echoed.headers['x-forwarded-host']).toBe(new URL(share.url).host);
      expect(echoed.headers['x-forwarded-proto']).toBe('http');
      expect(res.headers['set-cookie']).toEqual(['backend=1; Path=/']);
      expect(backend.requests.length).toBe(seen + 1);
      // the frontend's dial is a circuit on the router, as the frontend identity
      expect(app.router!.status().circuits).toContainEqual(expect.objectContaining({ serviceName: `share-${share.token}`, caller: 'weft-frontend' }));

      const posted = await agent.request(`${share.url}upload`, {
        method: 'POST',
        body: 'x'.repeat(200_000),
        headers: { 'content-type': 'text/plain' },
      });
      expect(posted.status).toBe(200);
      expect(posted.json()).toMatchObject({ method: 'POST', body: 'x'.repeat(200_000) });
    } finally {
      expect(await share.stop()).toBe(0);
    }
    expect(share.io.lines.at(-1)).toBe(`Share ${share.token} removed.`);
    expect(Object.values(await overlayParts(share.token)).flat()).toEqual([]);
    expect(app.router!.status().terminators.filter((t) => t.caller === `share-${share.token}`)).toEqual([]);
    expect((await agent.request(share.url)).status).toBe(404);
  });

  it('web: the hosting process serves the directory (no dotfiles, GET and HEAD only)', async () => {
    const dir = site({ 'index.html': '<h1>overlay</h1>', '.env': 'SECRET=1', 'a.txt': 'plain' });
    const share = await runShare(['public', dir, '--backend-mode', 'web', '--overlay'], app.dataDir);
    try {
      const page = await agent.request(share.url);
      expect(page.status).toBe(200);
      expect(page.body).toBe('<h1>overlay</h1>');
      expect((await agent.request(shareUrl(app, share.token, '/a.txt'))).headers['content-type']).toBe('text/plain; charset=utf-8');
      expect((await agent.request(shareUrl(app, share.token, '/.env'))).status).toBe(404);
      expect((await agent.request(shareUrl(app, share.token, '/a.txt'), { method: 'POST', body: 'x' })).status).toBe(405);
      const head = await agent.request(shareUrl(app, share.token, '/a.txt'), { method: 'HEAD' });
      expect([head.status, head.headers['content-length'], head.body]).toEqual([200, '5', '']);
    } finally {
      await share.stop();
    }
  });

  it('WebSockets go through the overlay too (spoofed svc-auth-* headers stripped by the frontend)', async () => {
    const share = await runShare(['public', `${backend.url}/base`, '--backend-mode', 'proxy', '--overlay'], app.dataDir);
    try {
      const ws = new WebSocket(shareUrl(app, share.token, '/ws?room=1').replace(/^http/, 'ws'), {
        dispatcher,
        headers: { 'svc-auth-email': 'spoofed@evil.test' },
      });
      const messages: string[] = [];
      await new Promise<void>((resolve, reject) => {
        ws.onmessage = (e) => {
          messages.push(String(e.data));
          if (messages.length === 1) ws.send('hi');
          if (messages.length === 2) resolve();
        };
        ws.onerror = () => reject(new Error('websocket failed'));
      });
      ws.close();
      const hello = JSON.parse(messages[0]!);
      expect(hello.url).toBe('/base/ws?room=1');
      expect(hello.headers['svc-auth-email']).toBeUndefined();
      expect(hello.headers['x-forwarded-host']).toBe(new URL(share.url).host);
      expect(JSON.parse(messages[1]!)).toEqual({ type: 'echo', data: 'hi' });
    } finally {
      await share.stop();
    }
  });

  it("OAuth is the frontend's, before any dial: no session → 401 for XHR, a redirect to the provider for a browser", async () => {
    const share = await runShare(['public', backend.url, '--backend-mode', 'proxy', '--overlay', '--oauth-provider', 'github'], app.dataDir);
    try {
      const seen = backend.requests.length;
      const xhr = await agent.request(share.url, { headers: { accept: 'application/json', 'x-requested-with': 'XMLHttpRequest' } });
      expect(xhr.status).toBe(401);
      const browser = await agent.request(share.url, { cookies: false });
      expect(browser.status).toBe(302);
      expect(browser.location).toMatch(/github\.com/);
      expect(backend.requests.length).toBe(seen);
      expect(app.router!.status().circuits.filter((c) => c.serviceName === `share-${share.token}`)).toEqual([]);
    } finally {
      await share.stop();
    }
  });

  it('bad input is refused before anything is created (exit 2)', async () => {
    const run = async (args: string[]) => {
      const io = new MemoryShareIo();
      return { code: await runShareCommand([...args, '--data-dir', app.dataDir], io), io };
    };
    const reserved = await run(['public', backend.url, '--backend-mode', 'proxy', '--overlay', '--reserved']);
    expect([reserved.code, reserved.io.errors[0]]).toEqual([
      2,
      expect.stringMatching(/--overlay --reserved: nobody would host the share .* use --remote --reserved/),
    ]);
    const relative = await run(['public', 'site/dir', '--backend-mode', 'web', '--remote']);
    expect([relative.code, relative.io.errors[0]]).toEqual([
      2,
      expect.stringMatching(/<target>: "site\/dir" must be the directory's absolute path on the machine that hosts the share/),
    ]);
    const both = await run(['public', backend.url, '--backend-mode', 'proxy', '--remote', '--overlay']);
    expect(both.code).toBe(2);
    const notGrant = new MemoryShareIo();
    const grant = { code: await runShareCommand(['host', 'bm90IGEgZ3JhbnQ'], notGrant), io: notGrant };
    expect([grant.code, grant.io.errors[0]]).toEqual([
      2,
      'weft share host: <grant>: not a share grant (copy the whole line printed by weft share public --remote)',
    ]);
  });

  it('a Weft without a router keeps local shares and refuses overlay ones', async () => {
    const other = await startTestApp({ configFile: writeConfigFile({ frontend: frontendSection() }), routerListener: 'off' });
    try {
      const io = new MemoryShareIo();
      expect(await runShareCommand(['public', backend.url, '--backend-mode', 'proxy', '--overlay', '--data-dir', other.dataDir], io)).toBe(2);
      expect(io.errors).toEqual([
        'weft share public: --overlay: this Weft runs no edge router (router.enabled is false), so shares cannot go through the overlay',
      ]);
      const local = await runShare(['public', backend.url, '--backend-mode', 'proxy'], other.dataDir);
      expect((await agent.request(`${local.url}x`)).json().url).toBe('/x');
      await local.stop();
    } finally {
      await other.stop();
    }
  });
});

describe('weft share public --remote and weft share host <grant>', () => {
  it('the host needs only the grant and the router port; it re-binds when the router comes back; removing the share ends it', async () => {
    const remote = await runShare(['public', `${backend.url}/remote`, '--backend-mode', 'proxy', '--remote', '--reserved'], app.dataDir);
    const line = remote.io.lines.find((l) => l.startsWith('  share grant: '))!;
    const grant = decodeGrant(line.slice('  share grant: '.length));
    expect(remote.io.lines).toContain(`  weft share host ${encodeGrant(grant)}`);
    expect(Object.keys(grant).sort()).toEqual([
      'apiSession',
      'backendMode',
      'bindSession',
      'ca',
      'cert',
      'key',
      'router',
      'serviceId',
      'share',
      'target',
      'url',
      'v',
    ]);
    expect(grant).toMatchObject({ router: app.urls.router, url: remote.url, backendMode: 'proxy', target: `${backend.url}/remote` });
    // nothing in it leads to the controller API
    expect(JSON.stringify(grant)).not.toContain(app.urls.api.replace(/^https:\/\//, ''));
    // not hosted yet: the frontend cannot reach it
    const unhosted = await agent.request(remote.url);
    expect(unhosted.status).toBe(502);

    // The host runs where the only way to Weft is a relay to the router port; its working dir holds a data dir
    // whose runtime.json names an unreachable API, to show that nothing of that is used.
    const relay = await tcpRelay({ host: '127.0.0.1', port: Number(app.urls.router!.split(':').pop()) });
    const cwd = tempDir('weft-remote-host-');
    mkdirSync(join(cwd, '.weft'));
    writeFileSync(join(cwd, '.weft', 'runtime.json'), JSON.stringify({ pid: process.pid, api: 'https://127.0.0.1:1' }));
    const viaRelay = encodeGrant({ ...grant, router: `tls:127.0.0.1:${relay.port}` });
    const host = await startWeftShare('host', [viaRelay], { cwd });
    try {
      expect(host.url).toBe(remote.url);
      expect(relay.connections).toBe(1);
      const res = await agent.request(`${remote.url}from-afar`);
      expect(res.status).toBe(200);
      expect(res.json().url).toBe('/remote/from-afar');

      // the router port goes away: the host notices, and binds again once it is back
      await relay.down();
      await eventually(() => host.stderr.some((l) => /not reachable through the edge router right now/.test(l)), 'the host to notice');
      await eventually(
        () => !app.router!.status().terminators.some((t) => t.caller === `share-${remote.token}`),
        'the router to drop the terminator',
      );
      expect((await agent.request(remote.url)).status).toBe(502);
      await relay.up();
      await eventually(() => host.stderr.some((l) => /reachable again/.test(l)), 'the host to bind again', 20_000);
      expect((await agent.request(`${remote.url}back`)).json().url).toBe('/remote/back');

      // released on the Weft machine: the grant no longer works and the host exits
      const io = new MemoryShareIo();
      expect(await runShareCommand(['release', remote.token, '--data-dir', app.dataDir], io)).toBe(0);
      expect(await host.exited).toBe(1);
      expect(host.stderr.join('\n')).toMatch(/the share grant no longer works/);
      expect(Object.values(await overlayParts(remote.token)).flat()).toEqual([]);
    } finally {
      await host.stop();
      await relay.close();
    }
  });

  it('weft share host <grant> <target> --backend-mode web serves what the host chooses; Ctrl-C stops hosting, the share stays', async () => {
    const remote = await runShare(['public', '/srv/not-here', '--backend-mode', 'web', '--remote', '--reserved'], app.dataDir);
    const grant = remote.io.lines.find((l) => l.startsWith('  share grant: '))!.slice('  share grant: '.length);
    const dir = site({ 'index.html': '<h1>from the host</h1>' });
    // the grant's own directory does not exist on this machine: refused before connecting
    const io = new MemoryShareIo();
    expect(await runShareCommand(['host', grant], io)).toBe(2);
    expect(io.errors[0]).toMatch(/<target>: directory \/srv\/not-here does not exist/);

    const host = await startWeftShare('host', [grant, dir, '--backend-mode', 'web']);
    try {
      expect(host.stdout[0]).toBe(`Hosting share ${remote.token} through the edge router ${app.urls.router}: ${dir} (backend mode web)`);
      expect((await agent.request(remote.url)).body).toBe('<h1>from the host</h1>');
      expect(await host.stop('SIGINT')).toBe(0);
      expect(host.stdout.at(-1)).toBe(`Stopped hosting share ${remote.token}.`);
      await eventually(() => !app.router!.status().terminators.some((t) => t.caller === `share-${remote.token}`), 'the terminator to go');
      expect((await agent.request(remote.url)).status).toBe(502);
      expect((await overlayParts(remote.token)).configs).toHaveLength(1);
    } finally {
      await host.stop();
      await runShareCommand(['release', remote.token, '--data-dir', app.dataDir], new MemoryShareIo());
    }
  });
});

describe('weft share release', () => {
  it('also removes what an overlay share left behind when its config and service were deleted elsewhere (the console)', async () => {
    const remote = await runShare(['public', backend.url, '--backend-mode', 'proxy', '--remote', '--reserved'], app.dataDir);
    const parts = await overlayParts(remote.token);
    expect((await admin.del(`/services/${parts.services[0].id}`)).status).toBe(200);
    expect((await admin.del(`/configs/${parts.configs[0].id}`)).status).toBe(200);
    expect(Object.values(await overlayParts(remote.token)).flat()).toHaveLength(5);
    const io = new MemoryShareIo();
    expect(await runShareCommand(['release', remote.token, '--data-dir', app.dataDir], io)).toBe(0);
    expect(io.lines).toEqual([`Share ${remote.token} removed.`]);
    expect(Object.values(await overlayParts(remote.token)).flat()).toEqual([]);
  });
});

describe('runtime.json', () => {
  it('names the router and the frontend identity when both run', async () => {
    const info = JSON.parse(readFileSync(join(app.dataDir, 'runtime.json'), 'utf8'));
    expect(info.overlay).toEqual({ router: app.urls.router, routerId: app.router!.id, frontendIdentityId: expect.any(String) });
    const frontend = (await admin.get(`/identities/${info.overlay.frontendIdentityId}`)).body.data;
    expect(frontend).toMatchObject({ name: 'weft-frontend', isAdmin: false });
  });
});
