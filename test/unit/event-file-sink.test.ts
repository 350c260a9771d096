// The file handler of the event loggers: JSON lines appended to a real file, rotated as OpenZiti's (lumberjack):
// before a write would pass maxsizemb the file is renamed <name>-<UTC time><ext> and a new one started; beyond
// maxbackups the oldest rotated files go. Go's JSON escaping of <, > and &.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RotatingFile, checkSinkPath, SinkPathError } from '../../src/main/events/fileSink';
import { eventFilter, jsonLine } from '../../src/main/events/loggers';
import { goTime } from '../../src/main/core/ops/events';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the event file handler', () => {
  it('rotates before a write would pass the size, names rotated files by UTC time, keeps maxbackups', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-sink-'));
    dirs.push(dir);
    let t = Date.parse('2026-11-27T10:00:00.000Z');
    const file = new RotatingFile(join(dir, 'events.json'), 100, 2, () => new Date((t += 1000)));
    const line = (i: number) => `{"n":${i},"pad":"${'x'.repeat(30)}"}\n`; // 45 bytes
    for (let i = 0; i < 9; i++) await file.write(line(i));
    await file.close();
    const names = readdirSync(dir).sort();
    expect(names).toEqual(['events-2026-11-27T10-00-03.000.json', 'events-2026-11-27T10-00-04.000.json', 'events.json']);
    // every file holds whole lines, within the size, and the newest has the last events
    for (const n of names) {
      const text = readFileSync(join(dir, n), 'utf8');
      expect(text.length).toBeLessThanOrEqual(100);
      expect(text.endsWith('\n')).toBe(true);
    }
    expect(readFileSync(join(dir, 'events.json'), 'utf8')).toBe(line(8));
    expect(readFileSync(join(dir, names[1]!), 'utf8')).toBe(line(6) + line(7));
  });

  it('start-up refuses paths it could not write, naming why', () => {
    expect(() => checkSinkPath('/dev/null/x.json')).toThrow(SinkPathError);
    expect(() => checkSinkPath('/no/such/dir/x.json')).toThrow(/cannot write to log file path: \/no\/such\/dir\/x\.json \(ENOENT\)/);
    const dir = mkdtempSync(join(tmpdir(), 'weft-sink-'));
    dirs.push(dir);
    expect(() => checkSinkPath(dir)).toThrow(/not a file/);
    expect(() => checkSinkPath(join(dir, 'new.json'))).not.toThrow();
  });

  it("writes Go's JSON: HTML characters escaped, one object per line; Go's time format", () => {
    expect(jsonLine({ namespace: 'entityChange', name: '<a & b>' })).toBe('{"namespace":"entityChange","name":"\\u003ca \\u0026 b\\u003e"}\n');
    expect(goTime('2026-11-27T17:04:05.120Z')).toBe('2026-11-27T17:04:05.12Z');
    expect(goTime('2026-11-27T17:04:05.000Z')).toBe('2026-11-27T17:04:05Z');
    expect(goTime('2026-11-27T17:04:05.007Z')).toBe('2026-11-27T17:04:05.007Z');
  });

  it('subscriptions: include lists, old names, commits with the changes they follow', () => {
    const accept = eventFilter([
      { type: 'entityChange', include: ['services'] },
      { type: 'edge.sessions', include: ['deleted'] },
    ]);
    const change = (entityType: string, eventId: string) => ({ namespace: 'entityChange', eventId, eventType: 'created', entityType });
    const commit = (eventId: string) => ({ namespace: 'entityChange', eventId, eventType: 'committed' });
    expect(accept(change('identities', '1'))).toBeUndefined();
    expect(accept(commit('1'))).toBeUndefined();
    expect(accept(change('services', '2'))).toBeDefined();
    expect(accept(commit('2'))).toEqual(commit('2'));
    expect(accept({ namespace: 'session', event_type: 'created' })).toBeUndefined();
    expect(accept({ namespace: 'session', event_type: 'deleted', id: 's' })).toEqual({ namespace: 'edge.sessions', event_type: 'deleted', id: 's' });
    expect(accept({ namespace: 'apiSession', event_type: 'created' })).toBeUndefined();
  });
});
