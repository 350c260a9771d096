// The operations side while PostgreSQL is down: the event logger, the metrics scrape and the circuit event queue.
// The database is halted with events waiting and written while it is down, then started again: the node keeps
// running, a scrape still answers (without the database's counts), circuit events that cannot be written are
// dropped and counted, and once the database is back the logger writes what was committed, each event once,
// without a restart.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { circuitEventsOf, type CircuitReport } from '../../src/main/core/dataPlane/index';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { eventually } from '../support/overlay';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { parsePrometheus, prometheusChecker, samplesOf } from '../support/prometheus';

let pg: PostgresServer;
let app: TestApp;
let admin: ApiClient;
let eventsFile: string;

beforeAll(async () => {
  prometheusChecker();
  pg = await startPostgres();
  const dir = tempDir('weft-events-outage-');
  eventsFile = join(dir, 'events.json');
  const config = join(dir, 'weft.yml');
  writeFileSync(
    config,
    stringify({
      events: {
        all: {
          subscriptions: [{ type: 'entityChange', include: ['services'] }, { type: 'circuit' }],
          handler: { type: 'file', format: 'json', path: eventsFile },
        },
      },
    }),
  );
  app = await startTestApp({ database: await pg.createDatabase(), configFile: config });
  admin = await app.adminClient();
}, 300_000);
afterAll(async () => {
  await admin?.close();
  await app?.stop();
  await pg?.stop();
});

const events = (): any[] =>
  readFileSync(eventsFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const serviceEvents = (name: string) => events().filter((e) => e.finalState?.name === name && e.eventType === 'created');

const circuit = (id: string): CircuitReport => ({
  eventType: 'created',
  circuitId: id,
  sessionId: 's',
  serviceId: 'svc',
  terminatorId: 't',
  instanceId: '',
  routerId: 'r',
  clientIdentityId: 'c',
  hostId: 'h',
  elapsedMs: 1,
  cost: 0,
});

describe('PostgreSQL goes away under the operations side', () => {
  it('the node keeps running and answers; once the database is back every committed event is written once', async () => {
    await admin.create('/services', { name: 'outage-before', encryptionRequired: true });
    await Promise.all(app.eventLoggers.map((l) => l.follower.caughtUp()));
    expect(serviceEvents('outage-before')).toHaveLength(1);

    // committed while the logger has not read it yet, then the database goes away
    await admin.create('/services', { name: 'outage-pending', encryptionRequired: true });
    await pg.halt();
    try {
      const down = await admin.post('/services', { name: 'outage-refused', encryptionRequired: true });
      expect(down.status).toBe(503);
      expect(down.body.error.code).toBe('SERVICE_UNAVAILABLE');

      // a scrape still answers: the resource counts are left out, the rest is there
      const scrape = await fetch(app.urls.metrics!);
      expect(scrape.status).toBe(200);
      const metrics = parsePrometheus(await scrape.text());
      expect(samplesOf(metrics, 'weft_resources')).toEqual([]);
      expect(samplesOf(metrics, 'weft_http_request_duration_seconds', { status: '503' }).length).toBeGreaterThan(0);

      // circuit events that cannot be written are dropped and counted
      const log = circuitEventsOf(app.core);
      const dropped = log.dropped;
      log.report(circuit('lost-while-down'));
      await log.idle();
      expect(log.dropped).toBe(dropped + 1);
    } finally {
      await pg.resume();
    }

    // writes resume by themselves, and the logger writes what was committed, each once
    await eventually(
      async () => (await admin.post('/services', { name: 'outage-after', encryptionRequired: true })).status === 201,
      'writes to resume',
      30_000,
    );
    circuitEventsOf(app.core).report(circuit('after-the-outage'));
    await circuitEventsOf(app.core).idle();
    await eventually(
      async () => {
        await Promise.all(app.eventLoggers.map((l) => l.follower.caughtUp()));
        return serviceEvents('outage-after').length === 1;
      },
      'the logger to catch up',
      30_000,
    );
    for (const name of ['outage-before', 'outage-pending', 'outage-after']) expect(serviceEvents(name)).toHaveLength(1);
    expect(serviceEvents('outage-refused')).toHaveLength(0);
    const circuits = events().filter((e) => e.namespace === 'circuit');
    expect(circuits.map((e) => e.circuit_id)).toEqual(['after-the-outage']);
    // and the counts are back in the scrape
    const back = parsePrometheus(await (await fetch(app.urls.metrics!)).text());
    expect(samplesOf(back, 'weft_resources', { type: 'services' })[0]?.value).toBeGreaterThanOrEqual(3);
  });
});
