import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';

/** The name of the key file in the data directory. */
export const SECRET_KEY_FILE = 'secrets.key';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SEALED = 'v1:';
const DIGEST = 'h1:';

/** A sealed value that cannot be opened: tampered with, moved to another row, or sealed with another key. */
export class SecretBoxError extends Error {}

/**
 * Secrets at rest: AES-256-GCM with a key kept outside the database. Sealed values are versioned text,
 * `v1:` + base64url(iv | tag | ciphertext); an optional context string (e.g. the row they belong to) is bound to
 * them as additional data, so a sealed value copied to another row does not open. `digest` is a keyed hash
 * (HMAC-SHA-256) for values that are only ever compared, never shown again (`h1:` + base64url). Both keys are derived
 * from the one key file (HKDF-SHA-256), so neither is used for the other's purpose.
 */
export class SecretBox {
  private readonly encKey: Buffer;
  private readonly macKey: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`a secret key must be ${KEY_BYTES} bytes`);
    this.encKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'weft secret box v1: encryption', KEY_BYTES));
    this.macKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'weft secret box v1: digest', KEY_BYTES));
  }

  static isSealed(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(SEALED);
  }

  static isDigest(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(DIGEST);
  }

  seal(plain: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.encKey, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return SEALED + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The plain text of a sealed value; throws SecretBoxError when it does not open with this key and context. */
  open(sealed: string, context = ''): string {
    if (!SecretBox.isSealed(sealed)) throw new SecretBoxError('not a sealed value');
    const raw = Buffer.from(sealed.slice(SEALED.length), 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('sealed value too short');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.encKey, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('sealed value does not open with this key');
    }
  }

  /** A keyed hash of `value` for `purpose` (a different purpose gives an unrelated digest). */
  digest(value: string, purpose: string): string {
    return DIGEST + createHmac('sha256', this.macKey).update(purpose).update('\0').update(value).digest('base64url');
  }
}

/**
 * Reads the 32-byte key file, or creates it (random, mode 0600, written whole before it appears under its name)
 * when it does not exist and `mayCreate()` agrees. Refuses a key that group or others may access, or of the wrong
 * size, with a message naming the file and the fix.
 */
export async function loadOrCreateSecretKey(
  file: string,
  opts: { mayCreate?: () => string | undefined | Promise<string | undefined> } = {},
): Promise<Buffer> {
  let stat;
  try {
    stat = statSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${file}: cannot read the secret key: ${(e as Error).message}`, { cause: e });
  }
  if (!stat) {
    const refusal = await opts.mayCreate?.();
    if (refusal) throw new Error(`${file}: the secret key is missing: ${refusal}`);
    createKeyFile(file);
    stat = statSync(file);
  }
  if (!stat.isFile()) throw new Error(`${file}: the secret key must be a regular file`);
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
    throw new Error(
      `${file}: the secret key must be accessible to its owner only (mode 0600), but its mode is ` +
        `${(stat.mode & 0o777).toString(8).padStart(4, '0')}; run: chmod 600 ${file}`,
    );
  }
  const key = readFileSync(file);
  if (key.length !== KEY_BYTES) {
    throw new Error(`${file}: the secret key must hold exactly ${KEY_BYTES} bytes, but it holds ${key.length}; restore it from a backup`);
  }
  return key;
}

/** Writes a fresh key to a temporary file, then links it into place: the name never points at a partial key. */
function createKeyFile(file: string): void {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, randomBytes(KEY_BYTES));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // EEXIST: another process created it first, use theirs; no hard links on this file system: rename instead
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') {
      renameSync(tmp, file);
      return;
    }
    if (code !== 'EEXIST') {
      unlinkSync(tmp);
      throw e;
    }
  }
  unlinkSync(tmp);
}
