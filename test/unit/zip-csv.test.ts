// The store-only ZIP writer (checked by Info-ZIP's unzip and by reading its own headers back) and the CSV reader
// behind the identity import.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CsvError, parseCsv, toCsv } from '../../src/main/core/csv';
import { csvTable } from '../../src/main/core/entities/listExport';
import { safeEntryName, zipStore } from '../../src/main/core/zip';

describe('zipStore', () => {
  it('writes an archive unzip accepts, with the files byte for byte', () => {
    const big = Buffer.alloc(70_000, 7);
    const zip = zipStore(
      [
        { name: 'a.jwt', data: 'eyJhbGciOi.x.y' },
        { name: 'dir/ünï.txt', data: 'héllo\n' },
        { name: 'big.bin', data: big },
        { name: 'empty', data: '' },
      ],
      new Date('2024-05-06T07:08:10Z'),
    );
    const dir = mkdtempSync(join(tmpdir(), 'weft-zip-'));
    writeFileSync(join(dir, 'x.zip'), zip);
    execFileSync('unzip', ['-tq', join(dir, 'x.zip')]);
    execFileSync('unzip', ['-q', join(dir, 'x.zip'), '-d', join(dir, 'out')]);
    expect(readFileSync(join(dir, 'out', 'a.jwt'), 'utf8')).toBe('eyJhbGciOi.x.y');
    expect(readFileSync(join(dir, 'out', 'dir', 'ünï.txt'), 'utf8')).toBe('héllo\n');
    expect(readFileSync(join(dir, 'out', 'big.bin')).equals(big)).toBe(true);
    const listing = execFileSync('zipinfo', [join(dir, 'x.zip')]).toString();
    expect(listing).toMatch(/4 files/);
    expect(listing).toMatch(/stor/);
    expect(listing).toMatch(/24-May-06 07:08/);
  });

  it('puts the right CRC, sizes and offsets in the headers', () => {
    const zip = zipStore([
      { name: 'one', data: 'abc' },
      { name: 'two', data: 'defg' },
    ]);
    expect(zip.readUInt32LE(0)).toBe(0x04034b50);
    expect(zip.readUInt32LE(14)).toBe(crc32('abc') >>> 0);
    const end = zip.length - 22;
    expect(zip.readUInt32LE(end)).toBe(0x06054b50);
    expect(zip.readUInt16LE(end + 10)).toBe(2);
    const dirOffset = zip.readUInt32LE(end + 16);
    expect(zip.readUInt32LE(dirOffset)).toBe(0x02014b50);
    const secondLocal = zip.readUInt32LE(dirOffset + 46 + 3 + 42);
    expect(secondLocal).toBe(30 + 3 + 3);
    expect(zip.subarray(secondLocal + 30, secondLocal + 33).toString()).toBe('two');
  });

  it('makes entry names safe and unique', () => {
    const taken = new Set<string>();
    expect(safeEntryName('../../etc/passwd', taken)).toBe('etc_passwd');
    expect(safeEntryName('alice.jwt', taken)).toBe('alice.jwt');
    expect(safeEntryName('ALICE.jwt', taken)).toBe('ALICE-2.jwt');
    expect(safeEntryName('', taken)).toBe('file');
  });
});

describe('parseCsv', () => {
  it('reads quoted fields, doubled quotes, CRLF, a BOM and multi-line values; skips blank lines; keeps line numbers', () => {
    const rows = parseCsv('\uFEFFname,attributes\r\n"a, b","x ""y"""\r\n\r\nc,"multi\nline"\nd,\n');
    expect(rows).toEqual([
      { line: 1, fields: ['name', 'attributes'] },
      { line: 2, fields: ['a, b', 'x "y"'] },
      { line: 4, fields: ['c', 'multi\nline'] },
      { line: 6, fields: ['d', ''] },
    ]);
  });

  it('takes semicolons when the header uses them', () => {
    expect(parseCsv('name;type\nx;User').map((r) => r.fields)).toEqual([
      ['name', 'type'],
      ['x', 'User'],
    ]);
  });

  it('reports an unclosed quote with its line', () => {
    expect(() => parseCsv('name\n"open')).toThrow(CsvError);
    expect(() => parseCsv('name\n"open')).toThrow(/line 2: a quoted field is not closed/);
    expect(() => parseCsv('"a"b,c')).toThrow(/unexpected text after a closing quote/);
  });
});

describe('toCsv and the list export table', () => {
  it('writes what parseCsv reads back: separators, quotes, line ends and edge spaces quoted', () => {
    const rows = [
      ['name', 'note', 'list'],
      ['a,b', 'say "hi"', 'x; y'],
      ['multi\nline', ' padded ', ''],
    ];
    const text = toCsv(rows);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(parseCsv(text).map((r) => r.fields)).toEqual(rows);
  });

  it('makes one column per field in first-seen order; references as names, plain lists joined, the rest as JSON', () => {
    const table = csvTable([
      { id: '1', name: 'web', roleAttributes: ['a', 'b'], type: { id: 't', entity: 'identity-types', name: 'Device' }, tags: { env: 'prod' } },
      { id: '2', name: 'db', extra: true, roleAttributes: [], type: null },
    ]);
    expect(table).toEqual([
      ['id', 'name', 'roleAttributes', 'type', 'tags', 'extra'],
      ['1', 'web', 'a; b', 'Device', '{"env":"prod"}', ''],
      ['2', 'db', '', '', '', 'true'],
    ]);
  });
});
