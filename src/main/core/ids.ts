import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Short random ids in the style of OpenZiti's entity ids (e.g. "kJd9a8sdE1"). */
export function newId(length = 10): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    const b = bytes[i]!;
    if (b < 248) out += ALPHABET[b % 62]; // reject the tail so every character is equally likely
  }
  return out.length === length ? out : newId(length);
}

export const newToken = (): string => randomUUID();
