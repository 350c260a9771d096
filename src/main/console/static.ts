import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, resolve, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

export const contentTypeOf = (file: string) => CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';

/**
 * The file under `root` a request path names: paths without an extension are the single-page app (index.html);
 * anything escaping the root, or with NUL bytes or bad escapes, is undefined.
 */
export function staticFileFor(root: string, pathname: string): string | undefined {
  let rel: string;
  try {
    rel = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (rel.includes('\0') || rel.includes('\\')) return undefined;
  if (!extname(rel)) rel = '/index.html';
  const base = resolve(root);
  const file = resolve(base, `.${rel}`);
  return file.startsWith(base + sep) ? file : undefined;
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Weft console</title></head><body>
<h1>The console has not been built</h1><p>Run <code>npm run build:renderer</code> (or <code>npm start</code>, which builds it), then reload.</p>
</body></html>`;

/** Serves a built renderer file (GET/HEAD), with long caching for Vite's hashed assets. */
export async function serveStatic(
  res: ServerResponse,
  root: string,
  pathname: string,
  head: boolean,
  headers: Record<string, string>,
): Promise<void> {
  const file = staticFileFor(root, pathname);
  const info = file ? await stat(file).catch(() => undefined) : undefined;
  if (!file || !info?.isFile()) {
    const index = await stat(resolve(root, 'index.html')).catch(() => undefined);
    if (!index) {
      res.writeHead(503, { ...headers, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(head ? undefined : NOT_BUILT);
      return;
    }
    res.writeHead(404, { ...headers, 'content-type': 'text/plain; charset=utf-8' });
    res.end(head ? undefined : 'Not found');
    return;
  }
  const immutable = pathname.startsWith('/assets/');
  res.writeHead(200, {
    ...headers,
    'content-type': contentTypeOf(file),
    'content-length': String(info.size),
    'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  if (head) {
    res.end();
    return;
  }
  await new Promise<void>((done) => {
    const stream = createReadStream(file);
    stream.on('error', () => {
      res.destroy();
      done();
    });
    stream.on('end', done);
    stream.pipe(res);
  });
}
