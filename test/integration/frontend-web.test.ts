// The `web` backend: static files with index.html, content types, GET/HEAD only, and no way out
// of the root (dot segments, %2e%2e, backslashes, symlinks) or into dotfiles.
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpUserAgent, startTestFrontend, type TestFrontend } from '../support/browser';

describe('frontend: web backend', () => {
  let dir: string;
  let fe: TestFrontend;
  const agent = new HttpUserAgent();
  const url = (p: string) => fe.shareUrl('site', p);
  /** Sends the path exactly as written (no client-side dot-segment or backslash normalisation). */
  const raw = (p: string, opts: { method?: string } = {}) => agent.request(url('/'), { ...opts, rawPath: p });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-web-'));
    const root = path.join(dir, 'root');
    await mkdir(path.join(root, 'docs', 'guide'), { recursive: true });
    await mkdir(path.join(root, '.git'));
    await mkdir(path.join(root, 'empty'));
    await writeFile(path.join(root, 'index.html'), '<h1>home</h1>');
    await writeFile(path.join(root, 'style.css'), 'body{}');
    await writeFile(path.join(root, 'app.js'), 'console.log(1)');
    await writeFile(path.join(root, 'data.json'), '{"a":1}');
    await writeFile(path.join(root, 'logo.svg'), '<svg/>');
    await writeFile(path.join(root, 'blob.bin'), Buffer.from([0, 1, 2]));
    await writeFile(path.join(root, 'with space.txt'), 'spaced');
    await writeFile(path.join(root, 'docs', 'guide', 'index.html'), '<h1>guide</h1>');
    await writeFile(path.join(root, '.env'), 'SECRET=1');
    await writeFile(path.join(root, '.git', 'config'), '[core]');
    await writeFile(path.join(dir, 'outside.txt'), 'outside the root');
    await mkdir(path.join(dir, 'outside-dir'));
    await writeFile(path.join(dir, 'outside-dir', 'index.html'), 'outside index');
    await symlink(path.join(root, 'style.css'), path.join(root, 'inside-link.css'));
    await symlink(path.join(dir, 'outside.txt'), path.join(root, 'escape.txt'));
    await symlink(path.join(dir, 'outside-dir'), path.join(root, 'escape-dir'));
    fe = await startTestFrontend({ noOAuth: true, shares: [{ token: 'site', backendMode: 'web', target: root }] });
  });

  afterAll(async () => {
    await fe?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves index.html for the root and for directories', async () => {
    const home = await agent.request(url('/'));
    expect(home.status).toBe(200);
    expect(home.body).toBe('<h1>home</h1>');
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
    expect((await agent.request(url('/docs/guide/'))).body).toBe('<h1>guide</h1>');
  });

  it('redirects a directory without its trailing slash, keeping the query', async () => {
    const res = await agent.request(url('/docs/guide?tab=2'));
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/docs/guide/?tab=2');
  });

  it('sets content types', async () => {
    const types: Record<string, string> = {
      '/style.css': 'text/css; charset=utf-8',
      '/app.js': 'text/javascript; charset=utf-8',
      '/data.json': 'application/json; charset=utf-8',
      '/logo.svg': 'image/svg+xml',
      '/blob.bin': 'application/octet-stream',
    };
    for (const [p, type] of Object.entries(types)) {
      const res = await agent.request(url(p));
      expect(res.status, p).toBe(200);
      expect(res.headers['content-type'], p).toBe(type);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    expect((await agent.request(url('/with%20space.txt'))).body).toBe('spaced');
    expect((await agent.request(url('/inside-link.css'))).status).toBe(200);
  });

  it('answers 404 for missing files and directories without index.html', async () => {
    expect((await agent.request(url('/missing.html'))).status).toBe(404);
    expect((await agent.request(url('/empty/'))).status).toBe(404);
  });

  it('never leaves the root', async () => {
    for (const p of [
      '/../outside.txt',
      '/docs/../../outside.txt',
      '/%2e%2e/outside.txt',
      '/%2E%2E%2Foutside.txt',
      '/docs/%2e%2e/%2e%2e/outside.txt',
      '/..%5coutside.txt',
      '/docs\\..\\..\\outside.txt',
      '/%00index.html',
      '/%E0%A4%A',
      '/escape.txt',
      '/escape-dir/',
      '/escape-dir/index.html',
    ]) {
      const res = await raw(p);
      expect(res.status, p).toBe(404);
      expect(res.body, p).not.toContain('outside');
    }
  });

  it('hides dotfiles and dot-directories', async () => {
    for (const p of ['/.env', '/.git/config', '/.git/', '/%2eenv', '/%2egit/config', '/docs/./guide/']) {
      expect((await raw(p)).status, p).toBe(404);
    }
  });

  it('allows only GET and HEAD', async () => {
    const head = await agent.request(url('/style.css'), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('6');
    expect(head.body).toBe('');
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await agent.request(url('/index.html'), { method, body: 'x' });
      expect(res.status, method).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
    }
  });
});
