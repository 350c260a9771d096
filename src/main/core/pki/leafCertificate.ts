import { createHash, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { BOOLEAN_TRUE, bitString, octetString, oid, readTlv, seq, TAG, time, tlv, unsignedInteger } from './der';
import { PkiError } from './errors';
import { keyAlgorithmOf } from './keys';

/** What a leaf certificate is for (its key usages and extended key usages). */
export type CertificateUsage = 'client' | 'server' | 'client-server';

/** An issuing CA as writeLeafCertificate uses it (made once per CA: see the issuer cache in certificates.ts). */
export interface LeafIssuer {
  key: KeyObject;
  /** the issuer's subject Name, DER */
  name: Buffer;
  /** the issuer's subject key identifier: the leaf's authority key identifier */
  keyId: Buffer;
  hash: string;
  /** the signature AlgorithmIdentifier, DER */
  algorithm: Buffer;
}

export interface LeafFields {
  serial: Buffer;
  issuer: LeafIssuer;
  commonName: string;
  notBefore: Date;
  notAfter: Date;
  /** SubjectPublicKeyInfo, DER */
  spki: Buffer;
  /** an RSA subject key also gets keyEncipherment */
  rsaKey: boolean;
  usage: CertificateUsage;
  sans: { dns?: string[]; ip?: string[]; uri?: string[] };
}

const OID = {
  cn: oid('2.5.4.3'),
  ski: oid('2.5.29.14'),
  aki: oid('2.5.29.35'),
  basicConstraints: oid('2.5.29.19'),
  keyUsage: oid('2.5.29.15'),
  extKeyUsage: oid('2.5.29.37'),
  san: oid('2.5.29.17'),
  serverAuth: oid('1.3.6.1.5.5.7.3.1'),
  clientAuth: oid('1.3.6.1.5.5.7.3.2'),
};
const VERSION_3 = Buffer.from([0xa0, 0x03, TAG.INTEGER, 0x01, 0x02]);
const SIGNATURE_ALGORITHMS: Record<string, { hash: string; algorithm: Buffer }> = {
  'EC-P256': { hash: 'sha256', algorithm: seq(oid('1.2.840.10045.4.3.2')) },
  'EC-P384': { hash: 'sha384', algorithm: seq(oid('1.2.840.10045.4.3.3')) },
  RSA: { hash: 'sha256', algorithm: seq(oid('1.2.840.113549.1.1.11'), Buffer.from([TAG.NULL, 0])) },
};

/** The issuer for writeLeafCertificate: the signature algorithm follows its key (as toWebCryptoSigner chooses it). */
export function leafIssuer(key: KeyObject, name: Buffer, keyId: Buffer): LeafIssuer {
  const alg = keyAlgorithmOf(key);
  const signature = SIGNATURE_ALGORITHMS[/^RSA-\d+$/.test(alg) ? 'RSA' : alg];
  if (!signature) throw new PkiError('INVALID_KEY', `unsupported signing key ${alg}`);
  return { key, name, keyId, ...signature };
}

const extension = (id: Buffer, critical: boolean, body: Buffer): Buffer =>
  critical ? seq(id, BOOLEAN_TRUE, octetString(body)) : seq(id, octetString(body));

/**
 * A leaf certificate (the fields @peculiar/x509's generator wrote for these, in the same order): v3, serial, the
 * issuer's name, validity, subject CN, the key; extensions subjectKeyIdentifier (SHA-1 of the key's bits),
 * authorityKeyIdentifier, basicConstraints (critical, not a CA), keyUsage (critical: digitalSignature, and
 * keyEncipherment for RSA keys), extKeyUsage and subjectAltName (DNS, IP, URI) when there are SANs.
 */
export function writeLeafCertificate(f: LeafFields): { der: Buffer; subject: string } {
  const cn = directoryString(f.commonName);
  const subject = seq(tlv(TAG.SET, seq(OID.cn, cn.der)));
  const spkiKeyBits = subjectPublicKeyBits(f.spki);
  const extensions = [
    extension(OID.ski, false, octetString(createHash('sha1').update(spkiKeyBits).digest())),
    extension(OID.aki, false, seq(tlv(0x80, f.issuer.keyId))),
    extension(OID.basicConstraints, true, seq()),
    // digitalSignature (bit 0), plus keyEncipherment (bit 2) for RSA
    extension(OID.keyUsage, true, f.rsaKey ? bitString(Buffer.from([0xa0]), 5) : bitString(Buffer.from([0x80]), 7)),
    extension(
      OID.extKeyUsage,
      false,
      seq(...(f.usage === 'server' ? [OID.serverAuth] : f.usage === 'client' ? [OID.clientAuth] : [OID.serverAuth, OID.clientAuth])),
    ),
  ];
  const names = generalNames(f.sans);
  if (names.length) extensions.push(extension(OID.san, false, seq(...names)));
  const tbs = seq(
    VERSION_3,
    unsignedInteger(f.serial),
    f.issuer.algorithm,
    f.issuer.name,
    seq(time(f.notBefore), time(f.notAfter)),
    subject,
    f.spki,
    tlv(0xa3, seq(...extensions)),
  );
  const signature = sign(f.issuer.hash, tbs, f.issuer.key);
  return { der: seq(tbs, f.issuer.algorithm, bitString(signature)), subject: `CN=${escapeRdnValue(cn.text)}` };
}

/** The subjectPublicKey BIT STRING's contents (after its unused-bits byte) of a DER SubjectPublicKeyInfo. */
function subjectPublicKeyBits(spki: Buffer): Buffer {
  const outer = readTlv(spki, 0);
  const algorithm = readTlv(spki, outer.valueStart, outer.end);
  const bits = readTlv(spki, algorithm.end, outer.end);
  return spki.subarray(bits.valueStart + 1, bits.end);
}

/**
 * A name's value as @peculiar/x509 wrote it from text: quotes and backslash escapes taken out, PrintableString
 * when every character allows it, UTF8String otherwise.
 */
function directoryString(value: string): { der: Buffer; text: string } {
  const quoted = /"(.*?[^\\])?"/.exec(value);
  const text = (quoted ? quoted[1]! : value).replace(/\\0a/gi, '\n').replace(/\\0d/gi, '\r').replace(/\\0g/gi, '\t').replace(/\\(.)/g, '$1');
  const printable = /^[A-Za-z0-9 '()+,-./:=?]*$/.test(text);
  return { der: tlv(printable ? TAG.PRINTABLE_STRING : TAG.UTF8_STRING, Buffer.from(text, printable ? 'latin1' : 'utf8')), text };
}

/** RFC 4514 escaping as @peculiar/x509's Name.toString does it (the subject text callers record). */
function escapeRdnValue(text: string): string {
  return text
    .replace(/([,+"\\<>;])/g, '\\$1')
    .replace(/^([ #])/, '\\$1')
    .replace(/([ ]$)/, '\\$1')
    .replace(/([\r\n\t])/, (c) => `\\${Buffer.from(c, 'utf8').toString('hex').toUpperCase()}`);
}

function generalNames(sans: LeafFields['sans']): Buffer[] {
  for (const ip of sans.ip ?? []) {
    if (!isIP(ip)) throw new PkiError('INVALID_ARGUMENT', `not an IP address: ${ip}`);
  }
  return [
    ...(sans.dns ?? []).map((name) => tlv(0x82, Buffer.from(name, 'latin1'))),
    ...(sans.ip ?? []).map((ip) => tlv(0x87, ipBytes(ip))),
    ...(sans.uri ?? []).map((uri) => tlv(0x86, Buffer.from(uri, 'latin1'))),
  ];
}

/** 4 bytes of an IPv4 address, 16 of an IPv6 one (also with an embedded IPv4 tail). */
export function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  let text = ip.replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number);
    text = text.slice(0, v4.index) + `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}
