/**
 * A minimal DER reader and writer: what the enrollment hot path needs to read a PKCS#10 CSR and write a leaf
 * certificate on node:crypto directly (@peculiar/x509's generic ASN.1 schema machinery costs several ms each).
 * The reader checks every length against its enclosing element and throws DerError on anything malformed.
 */

export class DerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DerError';
  }
}

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  TELETEX_STRING: 0x14,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  UNIVERSAL_STRING: 0x1c,
  BMP_STRING: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** One element: its tag, and where its header, value and end are in `buf`. */
export interface Tlv {
  buf: Buffer;
  tag: number;
  start: number;
  valueStart: number;
  end: number;
}

/** The element at `offset`, which must end at or before `limit`. */
export function readTlv(buf: Buffer, offset: number, limit = buf.length): Tlv {
  if (offset + 2 > limit) throw new DerError('truncated element');
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte tags are not supported');
  let length = buf[offset + 1]!;
  let valueStart = offset + 2;
  if (length & 0x80) {
    const n = length & 0x7f;
    if (n === 0 || n > 4) throw new DerError('unsupported length encoding');
    if (valueStart + n > limit) throw new DerError('truncated length');
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + buf[valueStart + i]!;
    valueStart += n;
  }
  const end = valueStart + length;
  if (end > limit) throw new DerError('element runs past its container');
  return { buf, tag, start: offset, valueStart, end };
}

/** The element at `offset`, checked to have `tag`. */
export function expectTlv(buf: Buffer, offset: number, limit: number, tag: number, what: string): Tlv {
  const tlv = readTlv(buf, offset, limit);
  if (tlv.tag !== tag) throw new DerError(`${what}: unexpected tag 0x${tlv.tag.toString(16)}`);
  return tlv;
}

/** The children of a constructed element. */
export function children(tlv: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = tlv.valueStart; at < tlv.end;) {
    const child = readTlv(tlv.buf, at, tlv.end);
    out.push(child);
    at = child.end;
  }
  return out;
}

export const value = (tlv: Tlv): Buffer => tlv.buf.subarray(tlv.valueStart, tlv.end);
export const whole = (tlv: Tlv): Buffer => tlv.buf.subarray(tlv.start, tlv.end);

/** Dotted text of an OBJECT IDENTIFIER. */
export function oidText(tlv: Tlv): string {
  if (tlv.tag !== TAG.OID) throw new DerError('expected an OBJECT IDENTIFIER');
  const bytes = value(tlv);
  if (!bytes.length || bytes[bytes.length - 1]! & 0x80) throw new DerError('malformed OBJECT IDENTIFIER');
  const arcs: number[] = [];
  let n = 0;
  for (const b of bytes) {
    n = n * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      if (!arcs.length) arcs.push(n < 80 ? Math.floor(n / 40) : 2, n < 80 ? n % 40 : n - 80);
      else arcs.push(n);
      n = 0;
    }
  }
  return arcs.join('.');
}

/** Text of a directory string (as @peculiar/x509 reads it); other types give the hex of their contents. */
export function stringValue(tlv: Tlv): string {
  const bytes = value(tlv);
  switch (tlv.tag) {
    case TAG.UTF8_STRING:
      return bytes.toString('utf8');
    case TAG.PRINTABLE_STRING:
    case TAG.IA5_STRING:
    case TAG.TELETEX_STRING:
      return bytes.toString('latin1');
    case TAG.BMP_STRING: {
      let s = '';
      for (let i = 0; i + 1 < bytes.length; i += 2) s += String.fromCharCode(bytes.readUInt16BE(i));
      return s;
    }
    case TAG.UNIVERSAL_STRING: {
      let s = '';
      for (let i = 0; i + 3 < bytes.length; i += 4) s += String.fromCodePoint(bytes.readUInt32BE(i));
      return s;
    }
    default:
      return bytes.toString('hex');
  }
}

// ---- writer ----

function lengthBytes(length: number): number[] {
  if (length < 0x80) return [length];
  const out: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) out.unshift(n & 0xff);
  return [0x80 | out.length, ...out];
}

/** One element from its tag and the encoded children (or raw value). */
export function tlv(tag: number, ...parts: Uint8Array[]): Buffer {
  const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag, ...lengthBytes(body.length)]), body]);
}

export const seq = (...parts: Uint8Array[]): Buffer => tlv(TAG.SEQUENCE, ...parts);

/** OBJECT IDENTIFIER from dotted text. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out: number[] = [];
  const push = (n: number) => {
    const bytes = [n & 0x7f];
    for (n = Math.floor(n / 128); n > 0; n = Math.floor(n / 128)) bytes.unshift(0x80 | (n & 0x7f));
    out.push(...bytes);
  };
  push(arcs[0]! * 40 + arcs[1]!);
  for (const arc of arcs.slice(2)) push(arc);
  return tlv(TAG.OID, Buffer.from(out));
}

/** Non-negative INTEGER from its big-endian magnitude. */
export function unsignedInteger(bytes: Uint8Array): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0 && !(bytes[i + 1]! & 0x80)) i++;
  const trimmed = bytes.subarray(i);
  return tlv(TAG.INTEGER, trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export const bitString = (bytes: Uint8Array, unusedBits = 0): Buffer => tlv(TAG.BIT_STRING, Buffer.from([unusedBits]), bytes);
export const octetString = (bytes: Uint8Array): Buffer => tlv(TAG.OCTET_STRING, bytes);
export const BOOLEAN_TRUE = Buffer.from([TAG.BOOLEAN, 1, 0xff]);

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 4.1.2.5), to the second. */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '') + 'Z';
  return date.getUTCFullYear() < 2050
    ? tlv(TAG.UTC_TIME, Buffer.from(digits.slice(2), 'latin1'))
    : tlv(TAG.GENERALIZED_TIME, Buffer.from(digits, 'latin1'));
}
