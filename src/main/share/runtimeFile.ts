import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ShareCliError } from './errors';
import type { FrontendOffer } from './oauthOptions';

/**
 * `<data dir>/runtime.json`: how local commands (`weft share`) find the running Weft. Written (0600) once the
 * listeners are up, removed on close.
 */
export interface RuntimeInfo {
  pid: number;
  /** controller API origin, e.g. https://127.0.0.1:1280 */
  api: string;
  /** absent when no frontend is configured */
  frontend?: FrontendOffer & {
    /** public URL of a share with `{token}` in place of its token, e.g. https://{token}.share.example.com/ */
    shareUrl: string;
  };
  /** present when the frontend can reach overlay shares: a frontend and the built-in edge router both run */
  overlay?: OverlayOffer;
}

/** What `weft share public --overlay|--remote` needs to set up an overlay share. */
export interface OverlayOffer {
  /** the built-in router's advertised URL, tls:host:port (where hosts connect) */
  router: string;
  routerId: string;
  /** the identity the frontend dials overlay shares as */
  frontendIdentityId: string;
}

export const RUNTIME_FILE = 'runtime.json';
export const TOKEN_PLACEHOLDER = '{token}';

export function runtimeFilePath(dataDir: string): string {
  return join(dataDir, RUNTIME_FILE);
}

/** Atomically replaces the runtime file (write to a private temporary file, then rename). */
export function writeRuntimeFile(dataDir: string, info: RuntimeInfo): void {
  const path = runtimeFilePath(dataDir);
  const tmp = `${path}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, JSON.stringify(info, null, 2) + '\n');
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** Removes the runtime file if it still describes this instance (another start may have replaced it). */
export function removeRuntimeFile(dataDir: string, api: string): void {
  const path = runtimeFilePath(dataDir);
  try {
    const current = JSON.parse(readFileSync(path, 'utf8')) as Partial<RuntimeInfo>;
    if (current.pid === process.pid && current.api === api) rmSync(path, { force: true });
  } catch {
    // absent or unreadable: nothing of ours to remove
  }
}

/** Reads the runtime file of a running Weft; a missing, broken or stale file is a clear error. */
export function readRuntimeFile(dataDir: string): RuntimeInfo {
  const path = runtimeFilePath(dataDir);
  const notRunning = `Weft is not running for data dir ${dataDir} (start it with: weft start --data-dir ${dataDir})`;
  if (!existsSync(path)) throw new ShareCliError(`${notRunning}; ${RUNTIME_FILE} not found`);
  let info: RuntimeInfo;
  try {
    info = JSON.parse(readFileSync(path, 'utf8')) as RuntimeInfo;
  } catch (err) {
    throw new ShareCliError(`cannot read ${path}: ${(err as Error).message}`);
  }
  if (!Number.isInteger(info?.pid) || typeof info.api !== 'string' || !URL.canParse(info.api)) {
    throw new ShareCliError(`${path} is not a Weft runtime file`);
  }
  if (!processExists(info.pid)) throw new ShareCliError(`${notRunning}; ${RUNTIME_FILE} is left over from process ${info.pid}`);
  return info;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
