import { crc32 } from 'node:zlib';

/**
 * A tiny ZIP writer: stored entries only (no compression — enrollment JWTs are small and already base64), UTF-8
 * names, no ZIP64 (each entry and the archive stay well under 4 GiB; callers bound what they put in). Enough for
 * "download these files as one archive" without a dependency.
 */
export interface ZipEntry {
  name: string;
  data: Buffer | string;
}

/** MS-DOS date and time (local fields of the UTC time, 2-second resolution), as ZIP headers carry them. */
function dosDateTime(at: Date): { date: number; time: number } {
  const year = Math.min(Math.max(at.getUTCFullYear(), 1980), 2107);
  return {
    date: ((year - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate(),
    time: (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | Math.floor(at.getUTCSeconds() / 2),
  };
}

const UTF8_NAMES = 0x0800;
const MAX = 0xffff_ffff;

/** Entry names as archive tools expect: forward slashes, no leading slash, no `..` segments, unique. */
export function safeEntryName(name: string, taken: Set<string>): string {
  let base =
    name
      .replace(/\\/g, '/')
      .split('/')
      .filter((s) => s && s !== '.' && s !== '..')
      .join('_')
      .replace(/[\u0000-\u001f]/g, '_') || 'file';
  if (base.length > 200) base = base.slice(0, 200);
  let candidate = base;
  for (let i = 2; taken.has(candidate.toLowerCase()); i++) {
    const dot = base.lastIndexOf('.');
    candidate = dot > 0 ? `${base.slice(0, dot)}-${i}${base.slice(dot)}` : `${base}-${i}`;
  }
  taken.add(candidate.toLowerCase());
  return candidate;
}

export function zipStore(entries: ZipEntry[], at: Date = new Date()): Buffer {
  const { date, time } = dosDateTime(at);
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = typeof entry.data === 'string' ? Buffer.from(entry.data, 'utf8') : entry.data;
    if (data.length >= MAX || name.length > 0xffff) throw new Error(`zip entry too large: ${entry.name}`);
    const crc = crc32(data) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0
    local.writeUInt16LE(UTF8_NAMES, 6);
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, 2.0
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(UTF8_NAMES, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(time, 12);
    central.writeUInt16LE(date, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    // extra 30, comment 32, disk 34, internal attributes 36: zero
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // external attributes: a regular file, rw-r--r--
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
    if (offset >= MAX) throw new Error('zip archive too large');
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  if (entries.length > 0xffff) throw new Error('too many zip entries');
  return Buffer.concat([...locals, directory, end]);
}
