// The floors of src/main/core, bottom up (docs/architecture.md, "Floors"): a module imports from its own floor and the
// floors below it, never from a higher one (type imports included), and reaches an engine of another folder only
// through that engine's facade (its index.ts). One table for the lint rule (eslint.config.js turns it into
// `no-restricted-imports` patterns per core folder) and for the test that checks the import graph
// (test/unit/import-cycles.test.ts). A unit is a folder of src/main/core or a file at its root (named without `.ts`).

/** @type {ReadonlyArray<{ name: string; units: readonly string[]; holds: string }>} */
export const CORE_FLOORS = [
  {
    name: 'primitives',
    units: ['errors', 'enrollmentErrors', 'ids', 'clock', 'serialQueue', 'validation', 'jsonSchema', 'csv', 'zip', 'kinds', 'permissions'],
    holds:
      "facts and primitives: API errors (OpenZiti's enrollment and certificate codes too), ids, time, ordered work, input validation, JSON schemas, CSV, ZIP, the role kinds, callers and permissions",
  },
  { name: 'pki', units: ['pki'], holds: 'certificates, CSRs, chains and their verification, PKCS#7, the controller PKI, JWT signing: pure crypto' },
  { name: 'store', units: ['store'], holds: 'the Store (SQLite, PostgreSQL), migrations, settings' },
  { name: 'query', units: ['query'], holds: 'ZitiQL → SQL, paging, role attribute fields and role matching' },
  {
    name: 'context',
    units: ['core', 'context', 'replyReuse', 'meters', 'eventRows'],
    holds:
      'the Core and Ctx, what a write and a write subscriber are, reply reuse, what the core measures, event rows (logins, circuits) in the outbox',
  },
  {
    name: 'entities',
    units: ['entities'],
    holds: 'the declaration mechanism, the generic write path and its write gate, bulk writes, and the types that need no engine',
  },
  { name: 'auth', units: ['auth'], holds: 'logins, API sessions, authenticators, MFA, OIDC, external JWTs, revocations, disable/enable' },
  {
    name: 'policy',
    units: ['policy'],
    holds: 'the role-kind types (identities, services, edge routers, posture checks), the policies, their index, access and sessions',
  },
  { name: 'enrollment', units: ['enrollment'], holds: 'enrollments and every enroll flow, CAs, certificate extension, identity import' },
  { name: 'ops', units: ['ops'], holds: 'audit log, outbox, integrity, snapshots, controller nodes, tracing' },
  { name: 'dataPlane', units: ['dataPlane'], holds: "what a router asks the core, the built-in router's entity, the live view" },
  { name: 'shares', units: ['shares'], holds: 'public shares and the identities Weft makes for them' },
  {
    name: 'composition',
    units: ['registry', 'modules', 'bootstrap'],
    holds: 'every resource type and what the adapters do with it; the modules (start-up, periodic, stop work, write subscribers)',
  },
];

/** Folders reached from other folders only through their facade `<engine>/index.ts`. */
export const ENGINES = ['pki', 'auth', 'policy', 'enrollment', 'ops', 'dataPlane', 'shares'];

/** The floor that composes the engines: it may reach behind their facades (declarations, hooks). */
export const COMPOSITION = 'composition';

/** The unit of a module, by its path relative to src/main/core (`auth/mfa.ts` → auth, `errors.ts` → errors). */
export function unitOf(path) {
  const parts = path.split('/');
  return parts.length === 1 ? parts[0].replace(/\.ts$/, '') : parts[0];
}

/** The floor of a unit (its index in CORE_FLOORS), or -1 when no floor holds it. */
export function floorOf(unit) {
  return CORE_FLOORS.findIndex((f) => f.units.includes(unit));
}

/**
 * What breaks the floors in an import graph (module → the modules it imports, paths relative to src/main/core, as madge
 * gives it): imports of a higher floor, imports behind another engine's facade, units no floor holds. Modules outside
 * src/main/core (`../../shared/...`) are no unit of it.
 */
export function floorViolations(graph) {
  const out = [];
  const inCore = (path) => !path.startsWith('../');
  for (const [from, all] of Object.entries(graph)) {
    if (!inCore(from)) continue;
    const deps = all.filter(inCore);
    const unit = unitOf(from);
    const floor = floorOf(unit);
    if (floor < 0) {
      out.push(`${from}: core/${unit} is on no floor (add it to src/main/core/floors.mjs)`);
      continue;
    }
    for (const to of deps) {
      const target = unitOf(to);
      if (target === unit) continue;
      const at = floorOf(target);
      if (at < 0) out.push(`${from} → ${to}: core/${target} is on no floor`);
      else if (at > floor) out.push(`${from} → ${to}: floor ${CORE_FLOORS[floor].name} imports floor ${CORE_FLOORS[at].name}, above it`);
      else if (ENGINES.includes(target) && CORE_FLOORS[floor].name !== COMPOSITION && to !== `${target}/index.ts`) {
        out.push(`${from} → ${to}: core/${target} is reached through its facade ${target}/index.ts`);
      }
    }
  }
  return out;
}
