// A stock router's certificates extended over its control channel, on the wire (scripted router;
// test/interop/stock-router-extend.test.ts runs `ziti router run --extend`): CSRs (20302) are answered with new
// certificates in a message of the controller's own (20301); the verify step (20303, answered with an edge Error 20002
// whose empty code is success) moves the router's record to the new certificate, after which it connects with it and
// no longer with the old one. Out-of-order, malformed and mismatched requests get OpenZiti's error codes and change
// nothing.
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintSha1 } from '../../src/main/core/pki/index';
import { ProtoReader, ProtoWriter } from '../../src/main/ctrl/protobuf';
import { Header, message, type Message } from '../../src/main/router/channel/wire';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { csr, csrWithSans } from '../support/pki';
import { connectedRouter, dial, enrolledRouter, ScriptedRouter, type Enrolled } from '../support/scriptedRouter';

let app: TestApp;
let admin: ApiClient;
let r: Enrolled;
let ch: ScriptedRouter;

const extendRequest = (clientCsr: string, serverCsr: string) =>
  message(20302, [], new ProtoWriter().bytes(1, clientCsr).bytes(2, serverCsr).uint(3, true).finish());
const verifyRequest = (pem: string | Buffer) => message(20303, [], typeof pem === 'string' ? new ProtoWriter().bytes(1, pem).finish() : pem);
/** The verify request's answer: an edge Error (code 1, message 2), replying to it. */
async function verify(pem: string | Buffer): Promise<{ code: string; text: string }> {
  const reply = await ch.channel.request(verifyRequest(pem), 10_000);
  expect(reply.contentType).toBe(20002);
  const e = new ProtoReader(reply.body);
  return { code: e.str(1), text: e.str(2) };
}
const fingerprintOf = async (id: string) =>
  ((await admin.get(`/edge-routers/${id}`)).body.data.fingerprint as string).replaceAll(':', '').toLowerCase();

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
  r = await enrolledRouter(app, admin, 'extending-router');
  ch = await connectedRouter(app, r);
});
afterAll(async () => {
  ch?.channel.close();
  await admin?.close();
  await app?.stop();
});

describe('router certificate extension over the control channel', () => {
  it('refuses a verify with nothing outstanding, and malformed ones, changing nothing', async () => {
    const before = await fingerprintOf(r.id);
    expect(await verify(r.certPem)).toEqual({
      code: 'INVALID_ROUTER_STATE',
      text: 'request is not possible as the router has no outstanding enrollment requests',
    });
    expect((await verify('')).code).toBe('MISSING_CLIENT_PEM');
    expect((await verify(Buffer.from([0x0a, 0xff]))).code).toBe('COULD_NOT_UNMARSHAL');
    expect(await fingerprintOf(r.id)).toBe(before);
  });

  it('issues new certificates for the CSRs; the verify step moves the record to the new one; the router connects with it', async () => {
    const oldFingerprint = await fingerprintOf(r.id);
    expect(oldFingerprint).toBe(fingerprintSha1(r.certPem));
    // a request whose client CSR names another router is refused (only logged, as OpenZiti does): nothing to verify
    const wrong = await csr('EC-P256', 'someone-else');
    const server = await csrWithSans(r.id, ['localhost'], ['127.0.0.1']);
    ch.channel.send(extendRequest(wrong.csrPem, server.csrPem));
    const client = await csr('EC-P256', r.id);
    ch.channel.send(extendRequest(client.csrPem, server.csrPem));
    const certs: Message = await ch.waitFor((m) => m.contentType === 20301);
    expect(certs.headers.has(Header.ReplyFor)).toBe(false); // a message of its own, as OpenZiti sends it
    const body = new ProtoReader(certs.body);
    const clientPem = body.str(1);
    const serverPem = body.str(2);
    const leaf = new X509Certificate(clientPem);
    expect(leaf.subject).toContain(`CN=${r.id}`);
    expect(new X509Certificate(serverPem).subjectAltName).toContain('IP Address:127.0.0.1');
    expect(ch.received.filter((m) => m.contentType === 20301)).toHaveLength(1);
    // not taken yet: the record keeps the old certificate until the router verifies
    expect(await fingerprintOf(r.id)).toBe(oldFingerprint);
    expect((await verify(r.certPem)).code).toBe('INVALID_CLIENT_PEM');
    expect(await verify(clientPem)).toEqual({ code: '', text: '' });
    const newFingerprint = fingerprintSha1(clientPem);
    expect(await fingerprintOf(r.id)).toBe(newFingerprint);
    // once taken, there is nothing left to verify; the channel still answers
    expect((await verify(clientPem)).code).toBe('INVALID_ROUTER_STATE');

    // the next connection: the new certificate is accepted, the old one refused
    ch.channel.close();
    await ch.closed;
    const renewed = await connectedRouter(app, { ...r, keyPem: client.keyPem, certPem: clientPem });
    expect((await admin.get(`/edge-routers/${r.id}`)).body.data.isOnline).toBe(true);
    renewed.channel.close();
    await renewed.closed;
    const stale = new ScriptedRouter(await dial(app, r));
    const refused = await stale.hello(r.id);
    expect(refused.headers.get(Header.ResultSuccess)?.[0]).toBe(0);
    expect(refused.body.toString()).toContain('incorrect fingerprint');
    stale.channel.close();
    ch = renewed;
  });
});
