import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { sendPage } from './pages';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
  '.pdf': 'application/pdf',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
};

export function contentTypeFor(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Decodes the URL path into safe segments, or undefined when it must not be served: bad
 * encoding, NUL, backslashes, and any segment starting with "." (dotfiles, ".", "..").
 */
export function safeSegments(urlPath: string): string[] | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return undefined;
  const segments = decoded.split('/').filter((s) => s.length > 0);
  if (segments.some((s) => s.startsWith('.'))) return undefined;
  return segments;
}

function notFound(res: ServerResponse): void {
  sendPage(res, 404, 'Not found', ['There is nothing at this address.']);
}

function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : `${root}${path.sep}`);
}

/** Serves a file from `rootDir` (GET/HEAD only); symlinks are followed only while they stay inside the root. */
export async function serveWebRoot(req: IncomingMessage, res: ServerResponse, rootDir: string, requestPath: string): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    sendPage(res, 405, 'Method not allowed', ['Only GET and HEAD are supported here.']);
    return;
  }
  const q = requestPath.indexOf('?');
  const urlPath = q >= 0 ? requestPath.slice(0, q) : requestPath;
  const query = q >= 0 ? requestPath.slice(q) : '';
  const segments = safeSegments(urlPath);
  if (!segments) return notFound(res);

  let root: string;
  try {
    root = await realpath(rootDir);
  } catch {
    sendPage(res, 502, 'Bad gateway', ['The shared directory is not available.']);
    return;
  }
  let file: string;
  try {
    file = await realpath(path.join(root, ...segments));
  } catch {
    return notFound(res);
  }
  if (!isInside(root, file)) return notFound(res);

  let info = await stat(file).catch(() => undefined);
  if (info?.isDirectory()) {
    if (!urlPath.endsWith('/')) {
      // Relative links in index.html resolve against the directory, so it needs its trailing slash.
      // Rebuilt from the checked segments: a raw "//host" path would become an off-site redirect.
      const location = `/${segments.map(encodeURIComponent).join('/')}/`.replace(/^\/\/$/, '/');
      res.writeHead(301, { Location: `${location}${query}`, 'Content-Length': 0 });
      res.end();
      return;
    }
    try {
      file = await realpath(path.join(file, 'index.html'));
    } catch {
      return notFound(res);
    }
    if (!isInside(root, file)) return notFound(res);
    info = await stat(file).catch(() => undefined);
  }
  if (!info?.isFile()) return notFound(res);

  const lastModified = info.mtime.toUTCString();
  // A strong validator from size and modification time (as nginx makes them): what If-Range and If-None-Match compare.
  const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
  const validators = { 'Last-Modified': lastModified, ETag: etag, 'Accept-Ranges': 'bytes', 'Cache-Control': 'no-cache' };
  if (notModified(req, etag, info.mtimeMs)) {
    res.writeHead(304, validators);
    res.end();
    return;
  }
  const range = requestedRange(req, info.size, etag, lastModified);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { ...validators, 'Content-Range': `bytes */${info.size}`, 'Content-Length': 0 });
    res.end();
    return;
  }
  const headers = { ...validators, 'Content-Type': contentTypeFor(file), 'X-Content-Type-Options': 'nosniff' };
  if (range) {
    res.writeHead(206, {
      ...headers,
      'Content-Range': `bytes ${range.start}-${range.end}/${info.size}`,
      'Content-Length': range.end - range.start + 1,
    });
  } else {
    res.writeHead(200, { ...headers, 'Content-Length': info.size });
  }
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  await pipeline(createReadStream(file, range ?? {}), res);
}

function notModified(req: IncomingMessage, etag: string, mtimeMs: number): boolean {
  const match = req.headers['if-none-match'];
  if (match !== undefined) {
    // weak comparison (RFC 9110 13.1.2); If-None-Match wins over If-Modified-Since
    return match.trim() === '*' || match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
  }
  const since = req.headers['if-modified-since'];
  return !!since && !Number.isNaN(Date.parse(since)) && Math.floor(mtimeMs / 1000) <= Math.floor(Date.parse(since) / 1000);
}

/**
 * The byte range a GET asks for (RFC 9110 14): one range of `bytes=first-last`, `first-` or `-suffix`. undefined = the
 * whole file (no Range, a Range that is not one valid byte range, several ranges, or an If-Range that no longer
 * matches); 'unsatisfiable' when the range starts beyond the end (416).
 */
export function requestedRange(
  req: Pick<IncomingMessage, 'headers'>,
  size: number,
  etag: string,
  lastModified: string,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  const header = req.headers.range;
  if (typeof header !== 'string') return undefined;
  const ifRange = req.headers['if-range'];
  // strong comparison: a weak tag or another date means the file changed since the client's first part
  if (typeof ifRange === 'string' && ifRange.trim() !== etag && ifRange.trim() !== lastModified) return undefined;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (!Number.isSafeInteger(suffix)) return undefined;
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const last = m[2] === '' ? size - 1 : Number(m[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(last)) return undefined;
  if (start >= size) return 'unsatisfiable';
  if (last < start) return undefined;
  return { start, end: Math.min(last, size - 1) };
}
