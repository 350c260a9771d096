// The API listener is bound before the core exists (so the core knows the API's real URL); until the routes are
// in, every request gets 503 in the error envelope, never a hang or a dropped connection.
import { request } from 'node:https';
import { describe, expect, it } from 'vitest';
import { bindApiListener } from '../../src/main/api/server';
import { externalCa } from '../support/pki';

function get(port: number, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the API listener while Weft starts', () => {
  it('answers 503 SERVICE_UNAVAILABLE in the envelope with Retry-After', async () => {
    const tls = await externalCa('starting');
    const { server, port } = await bindApiListener({ key: tls.keyPem, cert: tls.certPem }, '127.0.0.1', 0);
    try {
      expect(port).toBeGreaterThan(0);
      const r = await get(port, '/edge/client/v1/version');
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toBe('1');
      expect(r.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(typeof r.body.error.requestId).toBe('string');
      expect(r.body.meta.apiVersion).toBeDefined();
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});
