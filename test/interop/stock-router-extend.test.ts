// A stock `ziti router run` (v1.7.2) extending its certificates over Weft's control channel: started with --extend it
// sends CSRs at once; Weft issues new certificates, the router verifies them with Weft and writes them over its own
// files; the router's record takes the new client certificate, the router stays online, and restarted it connects
// with the new certificate.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintSha1 } from '../../src/main/core/pki/index';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrolledRouter, runRouter, stopRouters, type RouterDir } from './stockRouters';
import { eventually, openzitiTools, type ToolProcess } from './tools';

let app: TestApp;
let admin: ApiClient;
let ziti: string;
let r: RouterDir;
const procs: Record<string, ToolProcess | undefined> = {};

const record = async () => (await admin.get(`/edge-routers/${r.id}`)).body.data;
const recordFingerprint = async () => ((await record()).fingerprint as string).replaceAll(':', '').toLowerCase();
const clientCert = () => readFileSync(join(r.dir, 'client.cert'), 'utf8');
const serverCert = () => readFileSync(join(r.dir, 'server.chain.cert'), 'utf8');

beforeAll(async () => {
  ziti = openzitiTools().ziti;
  app = await startTestApp();
  admin = await app.adminClient();
  r = await enrolledRouter(ziti, admin, app.urls.ctrl!, 'stock-extend');
}, 120_000);

afterAll(async () => {
  await stopRouters(procs);
  await admin?.close();
  await app?.stop();
});

describe('ziti router run --extend against Weft', { timeout: 180_000 }, () => {
  it('the router gets, verifies and writes new certificates; its record follows; restarted, it connects with them', async () => {
    const oldClient = clientCert();
    const oldServer = serverCert();
    expect(await recordFingerprint()).toBe(fingerprintSha1(oldClient));

    procs.r = runRouter(ziti, r, ['--extend']);
    // the router writes its files (client, then server certificate) only once Weft has answered its verify request;
    // a file read while being written does not parse or differs from the record
    const newClient = await eventually(
      async () => {
        const client = clientCert();
        if (client === oldClient || serverCert() === oldServer) return undefined;
        try {
          return fingerprintSha1(client) === (await recordFingerprint()) ? client : undefined;
        } catch {
          return undefined;
        }
      },
      60_000,
      'the router wrote new certificates and its record took the client one',
    );
    expect(fingerprintSha1(newClient)).not.toBe(fingerprintSha1(oldClient));
    // the channel it extended on stays up
    await eventually(async () => (await record()).isOnline === true, 30_000, 'the router online');

    procs.r.kill('SIGKILL');
    await procs.r.exited;
    await eventually(async () => (await record()).isOnline === false, 30_000, 'the router offline');
    procs.r = runRouter(ziti, r);
    await eventually(async () => (await record()).isOnline === true, 60_000, 'the router online again with its new certificate');
    expect(await recordFingerprint()).toBe(fingerprintSha1(newClient));
  });
});
