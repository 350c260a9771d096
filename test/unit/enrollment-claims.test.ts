import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatIdentityName, uniqueIdentityName } from '../../src/main/core/enrollment/caClaims';
import { externalIdFromCertificate, type ExternalIdClaim } from '../../src/main/core/entities/cas';
import { SqliteStore as Store } from '../../src/main/core/store/sqlite';
import { clientCert, externalCa } from '../support/pki';

let certPem: string;
beforeAll(async () => {
  const ca = await externalCa('Claims CA');
  certPem = (
    await clientCert(ca, { commonName: 'dept:eng:alice', uriSans: ['https://x.example/a', 'spiffe://td/ns/prod/sa/web', 'spiffe://td/other'] })
  ).certPem;
});

const claim = (c: Partial<ExternalIdClaim>): ExternalIdClaim => ({ location: 'COMMON_NAME', matcher: 'ALL', parser: 'NONE', ...c });

describe('externalIdClaim', () => {
  it('locates, matches, parses and indexes', () => {
    expect(externalIdFromCertificate(certPem, claim({}))).toBe('dept:eng:alice');
    expect(externalIdFromCertificate(certPem, claim({ parser: 'SPLIT', parserCriteria: ':', index: 2 }))).toBe('alice');
    expect(externalIdFromCertificate(certPem, claim({ matcher: 'PREFIX', matcherCriteria: 'dept:' }))).toBe('dept:eng:alice');
    expect(externalIdFromCertificate(certPem, claim({ matcher: 'SUFFIX', matcherCriteria: 'bob' }))).toBeUndefined();
    expect(externalIdFromCertificate(certPem, claim({ location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe' }))).toBe(
      'spiffe://td/ns/prod/sa/web',
    );
    expect(externalIdFromCertificate(certPem, claim({ location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', index: 1 }))).toBe(
      'spiffe://td/other',
    );
    expect(externalIdFromCertificate(certPem, claim({ location: 'SAN_URI', index: 5 }))).toBeUndefined();
    expect(externalIdFromCertificate(certPem, claim({ location: 'SAN_EMAIL' }))).toBeUndefined();
  });
});

describe('identity names of CA auto enrollment', () => {
  const symbols = { caName: 'Corp CA', caId: 'ca1', commonName: 'laptop', requestedName: 'req', identityId: 'id1' };
  it('expands every placeholder (repeatedly); the default is [caName]-[commonName]', () => {
    expect(formatIdentityName('[caName]/[caId]/[commonName]/[requestedName]/[identityId]/[caName]', symbols)).toBe(
      'Corp CA/ca1/laptop/req/id1/Corp CA',
    );
    expect(formatIdentityName('', symbols)).toBe('Corp CA-laptop');
    expect(formatIdentityName('[unknown]', symbols)).toBe('[unknown]');
  });

  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'weft-claims-'));
    store = new Store(join(dir, 'db'));
    await store.migrate();
    const now = new Date().toISOString();
    await store.runSql("INSERT INTO identity_types (id, name, created_at, updated_at) VALUES ('Default', 'Default', ?, ?)", now, now);
    await store.runSql(
      "INSERT INTO auth_policies (id, name, primary_json, secondary_json, created_at, updated_at) VALUES ('default', 'Default', '{}', '{}', ?, ?)",
      now,
      now,
    );
    for (const [i, name] of ['dev', 'dev000001', 'de_v'].entries()) {
      await store.runSql(
        "INSERT INTO identities (id, name, type_id, auth_policy_id, created_at, updated_at) VALUES (?, ?, 'Default', 'default', ?, ?)",
        `i${i}`,
        name,
        now,
        now,
      );
    }
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  it('appends a six digit counter when the name is taken', async () => {
    expect(await uniqueIdentityName(store, 'free')).toBe('free');
    expect(await uniqueIdentityName(store, 'dev')).toBe('dev000002');
    expect(await uniqueIdentityName(store, 'de_v')).toBe('de_v000001');
  });
});
