// A network with every type `ziti ops export` writes, seeded through the Management API of Weft or of the real
// OpenZiti controller (test/interop/ascode*.test.ts).
import type { ApiClient } from './client';
import { externalCa } from './pki';

/** A full model: every type `ziti ops export` writes, with attributes, tags, `@` references and posture checks. */
export async function seed(admin: ApiClient): Promise<void> {
  const signer1 = await admin.create('/external-jwt-signers', {
    name: 'idp-main',
    issuer: 'https://idp.example.com',
    audience: 'weft',
    jwksEndpoint: 'https://idp.example.com/jwks',
    claimsProperty: 'email',
    useExternalId: true,
    enabled: true,
    tags: { idp: 'main' },
  });
  const signer2 = await admin.create('/external-jwt-signers', {
    name: 'idp-second',
    issuer: 'https://second.example.com',
    audience: 'weft',
    jwksEndpoint: 'https://second.example.com/jwks',
    enabled: true,
  });
  const ap = await admin.create('/auth-policies', {
    name: 'ap-jwt',
    primary: {
      cert: { allowed: true, allowExpiredCerts: false },
      extJwt: { allowed: true, allowedSigners: [signer1] },
      updb: {
        allowed: true,
        minPasswordLength: 8,
        maxAttempts: 5,
        lockoutDurationMinutes: 10,
        requireMixedCase: true,
        requireNumberChar: false,
        requireSpecialChar: false,
      },
    },
    secondary: { requireTotp: false, requireExtJwtSigner: signer2 },
    tags: { tier: 'gold' },
  });
  const ca = await externalCa('Ascode Test CA');
  await admin.create('/cas', {
    name: 'partner-ca',
    certPem: ca.certPem,
    isAutoCaEnrollmentEnabled: true,
    isOttCaEnrollmentEnabled: true,
    isAuthEnabled: true,
    identityRoles: ['partner'],
    identityNameFormat: '[caName]-[commonName]',
    tags: { partner: 'acme' },
  });
  await admin.create('/config-types', {
    name: 'ct-port',
    schema: { type: 'object', properties: { port: { type: 'integer' } }, required: ['port'] },
    tags: { kind: 'custom' },
  });
  const ctPort = (await admin.get(`/config-types?filter=${encodeURIComponent('name = "ct-port"')}`)).body.data[0].id;
  const cfgPort = await admin.create('/configs', { name: 'cfg-port', configTypeId: ctPort, data: { port: 8080 }, tags: { a: 'b' } });
  const cfgIntercept = await admin.create('/configs', {
    name: 'cfg-intercept',
    configTypeId: 'g7cIWbcGg', // intercept.v1
    data: { protocols: ['tcp'], addresses: ['web.ziti'], portRanges: [{ low: 80, high: 80 }] },
  });
  const web = await admin.create('/services', {
    name: 'svc-web',
    configs: [cfgPort, cfgIntercept],
    roleAttributes: ['web', 'shared'],
    encryptionRequired: true,
    terminatorStrategy: 'smartrouting',
    tags: { env: 'prod' },
  });
  await admin.create('/services', { name: 'svc-db', roleAttributes: ['db'], encryptionRequired: false, terminatorStrategy: 'random' });
  await admin.create('/posture-checks', {
    name: 'pc-os',
    typeId: 'OS',
    operatingSystems: [{ type: 'Windows', versions: ['>=10.0.19041'] }],
    roleAttributes: ['pc'],
    tags: { os: 'win' },
  });
  await admin.create('/posture-checks', {
    name: 'pc-mfa',
    typeId: 'MFA',
    timeoutSeconds: 600,
    promptOnWake: true,
    promptOnUnlock: false,
    roleAttributes: ['pc'],
  });
  await admin.create('/posture-checks', { name: 'pc-domain', typeId: 'DOMAIN', domains: ['corp.example.com'] });
  await admin.create('/posture-checks', { name: 'pc-mac', typeId: 'MAC', macAddresses: ['00:11:22:33:44:55'] });
  await admin.create('/posture-checks', {
    name: 'pc-process',
    typeId: 'PROCESS',
    process: { osType: 'Linux', path: '/usr/bin/agent', hashes: ['a'.repeat(64)] },
  });
  await admin.create('/posture-checks', {
    name: 'pc-multi',
    typeId: 'PROCESS_MULTI',
    semantic: 'AnyOf',
    processes: [{ osType: 'Windows', path: 'C:\\agent.exe', hashes: [], signerFingerprints: [] }],
  });
  const er = await admin.create('/edge-routers', { name: 'er-a', roleAttributes: ['public', 'eu'], isTunnelerEnabled: false, tags: { dc: 'fra' } });
  const alice = await admin.create('/identities', {
    name: 'alice',
    type: 'Default',
    isAdmin: false,
    roleAttributes: ['staff', 'partner'],
    authPolicyId: ap,
    tags: { team: 'red' },
  });
  await admin.create('/identities', { name: 'bob', type: 'Default', isAdmin: false, roleAttributes: ['staff'], externalId: 'bob@example.com' });
  await admin.create('/identities', { name: 'carol-admin', type: 'Default', isAdmin: true });
  await admin.create('/service-policies', {
    name: 'sp-dial',
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: ['#staff', `@${alice}`],
    serviceRoles: [`@${web}`, '#db'],
    postureCheckRoles: ['#pc'],
    tags: { pol: 'dial' },
  });
  await admin.create('/service-policies', { name: 'sp-bind', type: 'Bind', semantic: 'AllOf', identityRoles: ['@' + alice], serviceRoles: ['#web'] });
  await admin.create('/edge-router-policies', { name: 'erp-all', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: [`@${er}`, '#eu'] });
  await admin.create('/service-edge-router-policies', { name: 'serp-web', semantic: 'AllOf', serviceRoles: ['#web'], edgeRouterRoles: ['#public'] });
}
