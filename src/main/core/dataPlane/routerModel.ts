import type { Core } from '../core';
import { certificateDer, splitPemBundle } from '../pki/index';
import type { PostureCheckDetails } from '../policy/index';
import { allRows, json, rowShape } from '../store/rows';

/**
 * What a stock OpenZiti router keeps of the network to serve SDKs itself (OpenZiti's "router data model"): the
 * identities, services, service policies (with the identities, services and posture checks each one matches, from
 * the policy index), posture checks, configs, and the public keys it verifies OIDC access tokens and Dial/Bind session
 * tokens with. The router checks access with it before it asks the controller; the controller checks again (a
 * circuit or terminator is never created on the router's word). The control channel encodes it (ctrl/edgeMessages.ts) and sends its changes (ctrl/modelSync.ts).
 */
export interface RouterModel {
  configTypes: Array<{ id: string; name: string }>;
  configs: Array<{ id: string; typeId: string; name: string; dataJson: string }>;
  identities: RouterModelIdentity[];
  services: Array<{ id: string; name: string; encryptionRequired: boolean; configs: string[] }>;
  postureChecks: Array<{ id: string; name: string; typeId: string; details: PostureCheckDetails }>;
  policies: Array<{ id: string; name: string; type: 'Dial' | 'Bind'; identities: string[]; services: string[]; postureChecks: string[] }>;
  /** DER certificates; `jwt`: signs tokens (its SHA-1 is the tokens' kid), `x509`: a CA of client certificates */
  publicKeys: Array<{ der: Buffer; usages: Array<'jwt' | 'x509'> }>;
}

export interface RouterModelIdentity {
  id: string;
  name: string;
  disabled: boolean;
  defaultHostingPrecedence: string;
  defaultHostingCost: number;
  serviceHostingPrecedences: Record<string, string>;
  serviceHostingCosts: Record<string, number>;
  appDataJson: string;
  /** service id -> config type id -> config id (the identity's own service configs) */
  serviceConfigs: Record<string, Record<string, string>>;
}

const IDENTITY = rowShape({
  id: 'string',
  name: 'string',
  disabled: 'bool',
  default_hosting_precedence: 'string',
  default_hosting_cost: 'int',
  service_hosting_precedences: json<Record<string, string>>(),
  service_hosting_costs: json<Record<string, number>>(),
  app_data: 'string',
});
const SERVICE = rowShape({ id: 'string', name: 'string', encryption_required: 'bool', configs: json<string[]>() });
const POSTURE = rowShape({ id: 'string', name: 'string', type_id: 'string', details: json<PostureCheckDetails>() });
const MEMBER = rowShape({ policy_id: 'string', kind: 'string', entity_id: 'string' });

/** The whole model as it stands (one read snapshot). */
export async function routerModel(core: Core): Promise<RouterModel> {
  const store = core.store;
  return store.read(async () => {
    const [configTypes, configs, identityRows, overrides, serviceRows, postureRows, policyRows, members, cas, controllers] = await Promise.all([
      store.allSql<{ id: string; name: string }>('SELECT id, name FROM config_types'),
      store.allSql<{ id: string; config_type_id: string; name: string; data: string }>('SELECT id, config_type_id, name, data FROM configs'),
      allRows(
        store,
        IDENTITY,
        `SELECT id, name, disabled, default_hosting_precedence, default_hosting_cost, service_hosting_precedences,
           service_hosting_costs, app_data FROM identities`,
      ),
      store.allSql<{ identity_id: string; service_id: string; config_type_id: string; config_id: string }>(
        'SELECT identity_id, service_id, config_type_id, config_id FROM identity_service_configs',
      ),
      allRows(store, SERVICE, 'SELECT id, name, encryption_required, configs FROM services'),
      allRows(store, POSTURE, 'SELECT id, name, type_id, details FROM posture_checks'),
      store.allSql<{ id: string; name: string; type: 'Dial' | 'Bind' }>('SELECT id, name, type FROM service_policies'),
      allRows(
        store,
        MEMBER,
        `SELECT cp.policy_id, m.kind, m.entity_id FROM class_policies cp JOIN role_class_members m ON m.class_id = cp.class_id
         WHERE cp.kind IN ('identity', 'service', 'posture-check') AND cp.policy_id IN (SELECT id FROM service_policies)`,
      ),
      store.allSql<{ cert_pem: string }>('SELECT cert_pem FROM cas WHERE is_verified = 1'),
      store.allSql<{ cert_pem: string }>('SELECT cert_pem FROM controllers'),
    ]);
    const serviceConfigs = new Map<string, Record<string, Record<string, string>>>();
    for (const o of overrides) {
      const byService = serviceConfigs.get(o.identity_id) ?? {};
      (byService[o.service_id] ??= {})[o.config_type_id] = o.config_id;
      serviceConfigs.set(o.identity_id, byService);
    }
    const byPolicy = new Map(
      policyRows.map((p) => [p.id, { ...p, identities: [] as string[], services: [] as string[], postureChecks: [] as string[] }]),
    );
    for (const m of members) {
      const p = byPolicy.get(m.policy_id)!;
      (m.kind === 'identity' ? p.identities : m.kind === 'service' ? p.services : p.postureChecks).push(m.entity_id);
    }
    return {
      configTypes,
      configs: configs.map((c) => ({ id: c.id, typeId: c.config_type_id, name: c.name, dataJson: c.data })),
      identities: identityRows.map((i) => ({
        id: i.id,
        name: i.name,
        disabled: i.disabled,
        defaultHostingPrecedence: i.default_hosting_precedence,
        defaultHostingCost: i.default_hosting_cost,
        serviceHostingPrecedences: i.service_hosting_precedences,
        serviceHostingCosts: i.service_hosting_costs,
        appDataJson: i.app_data === '{}' ? '' : i.app_data,
        serviceConfigs: serviceConfigs.get(i.id) ?? {},
      })),
      services: serviceRows.map((s) => ({ id: s.id, name: s.name, encryptionRequired: s.encryption_required, configs: s.configs })),
      postureChecks: postureRows.map((p) => ({ id: p.id, name: p.name, typeId: p.type_id, details: p.details })),
      policies: [...byPolicy.values()],
      publicKeys: publicKeys(
        core,
        controllers.map((r) => r.cert_pem),
        cas.map((r) => r.cert_pem),
      ),
    };
  });
}

/**
 * As OpenZiti's controller lists them (sync_instant.go BuildPublicKeys): its token-signing certificates (this node's,
 * retired ones of the same key, the other nodes') for JWTs and client certificates, the network's root CA and the
 * verified third-party CAs for client certificates. Duplicates (the same certificate twice) once.
 */
function publicKeys(core: Core, nodes: string[], cas: string[]): RouterModel['publicKeys'] {
  const seen = new Set<string>();
  const out: RouterModel['publicKeys'] = [];
  const add = (pem: string, usages: Array<'jwt' | 'x509'>) => {
    const der = certificateDer(pem);
    const key = der.toString('base64');
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ der, usages });
  };
  for (const pem of core.jwt.certificatePems()) add(pem, ['jwt', 'x509']);
  add(core.pki.root.certPem, ['x509']);
  for (const bundle of nodes) for (const pem of splitPemBundle(bundle).slice(0, 1)) add(pem, ['jwt', 'x509']);
  for (const bundle of cas) for (const pem of splitPemBundle(bundle).slice(0, 1)) add(pem, ['x509']);
  return out;
}

/** Tables whose changes alter the model (the control channel sends it again after such a change). */
export const ROUTER_MODEL_TABLES = [
  'identities',
  'services',
  'service_policies',
  'class_policies',
  'role_class_members',
  'posture_checks',
  'configs',
  'config_types',
  'identity_service_configs',
  'service_configs',
  'cas',
  'controllers',
];
