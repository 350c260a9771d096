// Range requests in the web backend (RFC 9110 14): video seeking and resumable downloads — one byte range, suffix and
// open-ended ranges, 416 beyond the end, If-Range against the ETag or Last-Modified, and ranges ignored when they are
// several or malformed; ETag / If-None-Match next to If-Modified-Since.
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpUserAgent, startTestFrontend, type TestFrontend } from '../support/browser';

describe('frontend: Range requests in the web backend', () => {
  let dir: string;
  let fe: TestFrontend;
  const agent = new HttpUserAgent();
  const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
  const get = (headers: Record<string, string> = {}, method = 'GET') => agent.request(fe.shareUrl('site', '/movie.mp4'), { method, headers });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-range-'));
    await writeFile(path.join(dir, 'movie.mp4'), bytes);
    await writeFile(path.join(dir, 'empty.txt'), '');
    await utimes(path.join(dir, 'movie.mp4'), new Date('2024-01-01T00:00:00Z'), new Date('2024-01-01T00:00:00Z'));
    fe = await startTestFrontend({ noOAuth: true, shares: [{ token: 'site', backendMode: 'web', target: dir }] });
  });

  afterAll(async () => {
    await fe?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('advertises byte ranges and a strong ETag on a whole answer', async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['content-length']).toBe('1000');
    expect(res.headers.etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(res.headers['content-type']).toBe('video/mp4');
  });

  it('serves one range with 206 and Content-Range', async () => {
    const res = await agent.request(fe.shareUrl('site', '/movie.mp4'), { headers: { range: 'bytes=10-19' } });
    expect(res.status).toBe(206);
    expect(res.headers['content-range']).toBe('bytes 10-19/1000');
    expect(res.headers['content-length']).toBe('10');
    expect(res.body).toBe(bytes.subarray(10, 20).toString('latin1')); // bytes below 128: the same in UTF-8
  });

  it('open-ended and suffix ranges, clipped at the end', async () => {
    expect((await get({ range: 'bytes=990-' })).headers['content-range']).toBe('bytes 990-999/1000');
    expect((await get({ range: 'bytes=-5' })).headers['content-range']).toBe('bytes 995-999/1000');
    expect((await get({ range: 'bytes=-5000' })).headers['content-range']).toBe('bytes 0-999/1000');
    expect((await get({ range: 'bytes=995-5000' })).headers['content-range']).toBe('bytes 995-999/1000');
  });

  it('416 with the size for a range beyond the end', async () => {
    const res = await get({ range: 'bytes=1000-' });
    expect(res.status).toBe(416);
    expect(res.headers['content-range']).toBe('bytes */1000');
    expect((await get({ range: 'bytes=-0' })).status).toBe(416);
    expect((await agent.request(fe.shareUrl('site', '/empty.txt'), { headers: { range: 'bytes=0-' } })).status).toBe(416);
  });

  it('ignores several ranges and malformed ones: the whole file', async () => {
    for (const range of ['bytes=0-1,5-6', 'bytes=5-1', 'lines=1-2', 'bytes=abc', 'bytes=-']) {
      const res = await get({ range });
      expect(res.status, range).toBe(200);
      expect(res.headers['content-length']).toBe('1000');
    }
  });

  it('If-Range: the range only while the validator matches (resuming a download of a changed file starts over)', async () => {
    const { etag, 'last-modified': lastModified } = (await get()).headers;
    expect((await get({ range: 'bytes=0-9', 'if-range': etag as string })).status).toBe(206);
    expect((await get({ range: 'bytes=0-9', 'if-range': lastModified as string })).status).toBe(206);
    expect((await get({ range: 'bytes=0-9', 'if-range': '"stale-etag"' })).status).toBe(200);
    expect((await get({ range: 'bytes=0-9', 'if-range': `W/${etag as string}` })).status).toBe(200);
    expect((await get({ range: 'bytes=0-9', 'if-range': 'Mon, 01 Jan 2001 00:00:00 GMT' })).status).toBe(200);
  });

  it('conditional requests: If-None-Match with the ETag, If-Modified-Since', async () => {
    const { etag, 'last-modified': lastModified } = (await get()).headers;
    expect((await get({ 'if-none-match': etag as string })).status).toBe(304);
    expect((await get({ 'if-none-match': `"other", W/${etag as string}` })).status).toBe(304);
    expect((await get({ 'if-none-match': '"other"', 'if-modified-since': lastModified as string })).status).toBe(200);
    expect((await get({ 'if-modified-since': lastModified as string })).status).toBe(304);
  });

  it('HEAD with a range answers the same headers without a body', async () => {
    const res = await get({ range: 'bytes=0-99' }, 'HEAD');
    expect(res.status).toBe(206);
    expect(res.headers['content-length']).toBe('100');
    expect(res.body).toBe('');
  });
});
