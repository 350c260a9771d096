import { randomBytes } from 'node:crypto';
import { hashPassword } from './auth/passwords';
import type { Core } from './core';
import { authPolicies, DEFAULT_AUTH_POLICY_ID, DEFAULT_PRIMARY, DEFAULT_SECONDARY } from './entities/authPolicies';
import { configTypes } from './entities/configTypes';
import { SVC_PROXY_CONFIG_TYPE_ID, TUNNELER_CONFIG_TYPES } from './entities/builtinConfigTypes';
import { IDENTITY_TYPES, identities } from './policy/identities';
import { applyCreate, applySystemCreate } from './entities/resource';
import { identityTypes } from './entities/identityTypes';
import { postureCheckTypes } from './policy/postureChecks';
import { addUpdbAuthenticator } from './auth/authenticators';
import { svcProxyV1 } from './shares/schema';

const ALL_OS = ['Windows', 'WindowsServer', 'Android', 'iOS', 'macOS', 'Linux'];
const DESKTOP_OS = ['Windows', 'WindowsServer', 'macOS', 'Linux'];
const os = (types: string[]) => types.map((type) => ({ type, versions: [] as string[] }));
/** Config types every controller starts with: OpenZiti's tunneler types and Weft's public share type. */
export const BUILTIN_CONFIG_TYPES = [...TUNNELER_CONFIG_TYPES, { id: SVC_PROXY_CONFIG_TYPE_ID, name: 'svc.proxy.v1', schema: svcProxyV1 }];

export const POSTURE_CHECK_TYPES = [
  { id: 'OS', name: 'Operating System Check', operatingSystems: os(ALL_OS) },
  { id: 'PROCESS', name: 'Process Check', operatingSystems: os(DESKTOP_OS) },
  { id: 'PROCESS_MULTI', name: 'Multi Process Check', operatingSystems: os(DESKTOP_OS) },
  { id: 'DOMAIN', name: 'Windows Domain Check', operatingSystems: os(['Windows', 'WindowsServer']) },
  { id: 'MAC', name: 'MAC Address Check', operatingSystems: os(ALL_OS) },
  { id: 'MFA', name: 'MFA Check', operatingSystems: os(ALL_OS) },
];

export interface AdminCredentials {
  username: string;
  password?: string;
}

export interface BootstrapResult {
  /** Set only on the start that created the default admin with a generated password. */
  generatedAdminPassword?: string;
  adminUsername: string;
}

/** Creates what a controller needs on first start; later starts find it and change nothing. */
export async function bootstrap(core: Core, admin: AdminCredentials): Promise<BootstrapResult> {
  const store = core.store;
  const defaultAdmin = () =>
    store.getSql<{ username: string }>(
      "SELECT a.username FROM identities i JOIN authenticators a ON a.identity_id = i.id AND a.method = 'updb' WHERE i.is_default_admin = 1",
    );
  let existingAdmin = await defaultAdmin();
  let generated: string | undefined;
  let passwordHash: string | undefined;
  if (!existingAdmin) {
    generated = admin.password ? undefined : randomBytes(15).toString('base64url');
    passwordHash = await hashPassword(admin.password ?? generated!);
  }
  const now = core.clock.now().toISOString();
  await store.tx(async () => {
    // everything through the resource write path, as the system; later starts find the rows and skip them
    const missing = async (table: string, id: string) => !(await store.getSql(`SELECT 1 FROM ${table} WHERE id = ?`, id));
    for (const t of IDENTITY_TYPES) {
      if (await missing('identity_types', t)) await applySystemCreate(core.system, identityTypes, { id: t, columns: { name: t } });
    }
    for (const t of POSTURE_CHECK_TYPES) {
      if (!(await missing('posture_check_types', t.id))) continue;
      await applySystemCreate(core.system, postureCheckTypes, {
        id: t.id,
        columns: { name: t.name, operating_systems: JSON.stringify(t.operatingSystems), version: '1' },
      });
    }
    if (await missing('auth_policies', DEFAULT_AUTH_POLICY_ID)) {
      await applyCreate(
        core.system,
        authPolicies,
        { name: 'Default', primary: DEFAULT_PRIMARY, secondary: DEFAULT_SECONDARY },
        { id: DEFAULT_AUTH_POLICY_ID },
      );
    }
    for (const t of BUILTIN_CONFIG_TYPES) {
      if (await missing('config_types', t.id))
        await applyCreate(core.system, configTypes, { name: t.name, schema: t.schema, target: 'service' }, { id: t.id });
    }
    // Weft's own share type follows this version's schema (it gained `overlay`); OpenZiti's types are left alone.
    const svcProxy = BUILTIN_CONFIG_TYPES.find((t) => t.id === SVC_PROXY_CONFIG_TYPE_ID)!;
    await store.runSql(
      'UPDATE config_types SET schema = ?, updated_at = ? WHERE id = ? AND schema <> ?',
      JSON.stringify(svcProxy.schema),
      now,
      svcProxy.id,
      JSON.stringify(svcProxy.schema),
    );
    // another node on the same database may have made it meanwhile (writes are serialised: this sees it)
    existingAdmin ??= await defaultAdmin();
    if (existingAdmin) generated = undefined;
    else {
      // through the resource write path, as the system: its role class is made in this transaction
      const id = await applyCreate(
        core.system,
        identities,
        { name: 'Default Admin', type: 'User', isAdmin: true, authPolicyId: DEFAULT_AUTH_POLICY_ID },
        { columns: { is_default_admin: 1 } },
      );
      await addUpdbAuthenticator(core, id, admin.username, passwordHash!);
    }
  });
  return { generatedAdminPassword: generated, adminUsername: existingAdmin?.username ?? admin.username };
}
