// A setup key redeemed over the Client API gives an enrollment JWT the stock `ziti edge enroll` (v1.7.2) takes: the
// identity file it writes holds a certificate for the new identity, and the spent token cannot be used again. The
// key's own JWT enrolls directly, a new device each time, until the key is used up.
import { X509Certificate } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/app';
import type { ApiClient } from '../support/client';
import { startWeftProcess, type WeftProcess } from '../support/weftProcess';
import { openzitiTools, ZitiCli } from './tools';

const PASSWORD = 'interop-admin-password-1';
let weft: WeftProcess;
let cli: ZitiCli;
let admin: ApiClient;

beforeAll(async () => {
  weft = await startWeftProcess(tempDir(), ['--api-address', '127.0.0.1:0', '--console-address', '127.0.0.1:0'], {
    WEFT_ADMIN_USERNAME: 'admin',
    WEFT_ADMIN_PASSWORD: PASSWORD,
  });
  cli = new ZitiCli(openzitiTools().ziti);
  admin = await weft.login('admin', PASSWORD);
});
afterAll(async () => {
  await admin?.close();
  await weft?.stop();
});

describe('setup keys with the ziti CLI', { timeout: 120_000 }, () => {
  it('ziti edge enroll takes the JWT a redeemed setup key gives', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const made = await admin.post('/weft/setup-keys', { name: 'cli-key', expiresAt, maxUses: 2, roleAttributes: ['cli'] });
    expect(made.status, made.text).toBe(201);
    const redeemed = await admin.post('/weft/setup-keys/redeem', { key: made.body.data.key, name: 'cli-device' }, { api: 'client' });
    expect(redeemed.status, redeemed.text).toBe(201);
    const { identityId, enrollmentJwt } = redeemed.body.data;
    const jwt = join(cli.cwd, 'cli-device.jwt');
    const copy = join(cli.cwd, 'cli-device-copy.jwt');
    writeFileSync(jwt, enrollmentJwt);
    copyFileSync(jwt, copy);
    const file = join(cli.cwd, 'cli-device.json');
    await cli.ok('edge', 'enroll', jwt, '-o', file);
    const identity = JSON.parse(readFileSync(file, 'utf8'));
    expect(identity.ztAPI).toBe(`${weft.api}/edge/client/v1`);
    expect(new X509Certificate(identity.id.cert.replace(/^pem:/, '')).subject).toContain(`CN=${identityId}`);
    const after = (await admin.get(`/identities/${identityId}`)).body.data;
    expect(after).toMatchObject({ name: 'cli-device', roleAttributes: ['cli'], enrollment: {} });
    expect(await cli.fails('edge', 'enroll', copy, '-o', join(cli.cwd, 'again.json'))).toMatch(/enroll error|INVALID_ENROLLMENT_TOKEN|40[04]/);
  });

  it("ziti edge enroll takes the key's own JWT: a new device each time, refused once the key is used up", async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const made = await admin.post('/weft/setup-keys', { name: 'fleet', expiresAt, maxUses: 2, roleAttributes: ['fleet'] });
    expect(made.status, made.text).toBe(201);
    const jwt = join(cli.cwd, 'fleet.jwt');
    const certs: string[] = [];
    for (const n of [1, 2]) {
      const file = join(cli.cwd, `fleet-${n}.json`);
      // the same JWT on every device (the CLI moves it into the identity file: written again each time)
      writeFileSync(jwt, made.body.data.enrollmentJwt);
      await cli.ok('edge', 'enroll', jwt, '-o', file);
      certs.push(JSON.parse(readFileSync(file, 'utf8')).id.cert);
    }
    expect(new Set(certs).size).toBe(2);
    const devices = (await admin.get(`/identities?filter=${encodeURIComponent('anyOf(roleAttributes) = "fleet"')}`)).body.data as any[];
    expect(devices.map((d) => d.name)).toHaveLength(2);
    writeFileSync(jwt, made.body.data.enrollmentJwt);
    expect(await cli.fails('edge', 'enroll', jwt, '-o', join(cli.cwd, 'fleet-3.json'))).toMatch(/SETUP_KEY_USED_UP|410|used as many times/);
  });
});
