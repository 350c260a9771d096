import { open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

/** Where a logger's JSON lines go. */
export interface Sink {
  write(text: string): Promise<void>;
  close(): Promise<void>;
}

export class SinkPathError extends Error {}

/**
 * Whether Weft could write `path` (checked at start-up, before anything is written): a writable file, or a missing
 * one in a writable directory. Throws SinkPathError with the reason.
 */
export function checkSinkPath(path: string): void {
  const refuse = (why: string) => new SinkPathError(`cannot write to log file path: ${path} (${why})`);
  try {
    if (existsSync(path)) {
      if (!statSync(path).isFile() && !path.startsWith('/dev/')) throw refuse('not a file');
      accessSync(path, constants.W_OK);
    } else {
      const dir = dirname(path);
      if (!statSync(dir).isDirectory()) throw refuse(`${dir} is not a directory`);
      accessSync(dir, constants.W_OK);
    }
  } catch (e) {
    if (e instanceof SinkPathError) throw e;
    throw refuse((e as NodeJS.ErrnoException).code ?? (e as Error).message);
  }
}

/**
 * A file of JSON lines rotated as OpenZiti's file handler rotates (lumberjack): before a write would take it past
 * `maxBytes`, the file is renamed `<name>-<UTC time><ext>` (e.g. events-2026-11-27T17-04-05.123.json) and a new one
 * started; beyond `maxBackups` rotated files (0: keep all) the oldest go.
 */
export class RotatingFile implements Sink {
  private handle?: FileHandle;
  private size = 0;
  private closed = false;

  constructor(
    private readonly path: string,
    private readonly maxBytes: number,
    private readonly maxBackups: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async write(text: string): Promise<void> {
    if (this.closed) throw new Error(`the event log ${this.path} is closed`);
    const bytes = Buffer.from(text);
    if (!this.handle) await this.openFile();
    if (this.size > 0 && this.size + bytes.length > this.maxBytes && !this.path.startsWith('/dev/')) await this.rotate();
    await this.handle!.appendFile(bytes);
    this.size += bytes.length;
  }

  private async openFile(): Promise<void> {
    this.handle = await open(this.path, 'a', 0o644);
    this.size = (await this.handle.stat()).size;
  }

  private async rotate(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
    const ext = extname(this.path);
    const stem = basename(this.path, ext);
    const time = this.now().toISOString().replace(/:/g, '-').replace('Z', '');
    await rename(this.path, join(dirname(this.path), `${stem}-${time}${ext}`));
    if (this.maxBackups > 0) await this.prune(stem, ext);
    await this.openFile();
  }

  /** The rotated files of this log beyond the newest maxBackups are removed. */
  private async prune(stem: string, ext: string): Promise<void> {
    const dir = dirname(this.path);
    const rotated = /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}$/;
    const backups = (await readdir(dir)).filter(
      (f) => f.startsWith(`${stem}-`) && f.endsWith(ext) && rotated.test(f.slice(stem.length + 1, f.length - ext.length)),
    );
    backups.sort(); // the names sort by time
    for (const f of backups.slice(0, Math.max(0, backups.length - this.maxBackups))) await rm(join(dir, f), { force: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.handle?.close();
    this.handle = undefined;
  }
}

/** Weft's standard output (as OpenZiti's stdout handler). */
export const stdoutSink: Sink = {
  write: (text) =>
    new Promise<void>((resolve, reject) => {
      process.stdout.write(text, (err) => (err ? reject(err) : resolve()));
    }),
  close: async () => {},
};
