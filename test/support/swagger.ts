import { clientApiUrl } from '../../src/main/api/legacyPaths';
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

/**
 * Validates the JSON responses of the integration tests against the official OpenZiti Edge API specs
 * (swagger 2.0: client.yml, management.yml). The specs are read from outside the repository, never copied in:
 * env WEFT_OPENZITI_SPEC_DIR, then ../shared/reference/openziti-edge-api next to the repository, then the
 * github.com/openziti/edge-api Go module that test/interop requires.
 *
 * Swagger 2.0 is translated to the JSON schema ajv understands: `$ref: '#/definitions/X'` points into one schema
 * per API holding all definitions; `x-nullable: true` allows null (and nothing else does: OpenZiti's go-swagger
 * clients fail on null where the spec does not allow it); `discriminator` dispatches on the property's value to
 * the subtype whose `x-class` (or name) it is; additional properties are allowed unless the spec says otherwise.
 * Where go-swagger itself is lenient, so is this: `additionalProperties: {type: object}` maps hold any value, the
 * "url" format is unchecked, "uri" accepts the relative `./x/1` links the real controller sends.
 *
 * Errors are checked against apiErrorEnvelope even where the spec does not document the status or the route.
 * Other routes or statuses the spec does not document are skipped and remembered: with WEFT_SWAGGER_REPORT=<file> every
 * checked and skipped (api, method, path template, status) is appended to <file>; `npx tsx
 * test/support/swagger.ts <file>` prints the coverage (and the spec operations no test reached). WEFT_SWAGGER_SURVEY=1
 * records mismatches in that file instead of failing the test (to see them all in one run).
 */

type ApiName = 'client' | 'management';
type Json = any;
interface Spec {
  basePath: string;
  paths: Record<string, Record<string, Json>>;
  definitions: Record<string, Json>;
  produces?: string[];
}
interface Template {
  template: string;
  regex: RegExp;
  params: number;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv, opts?: object) => Ajv;
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const APIS: ApiName[] = ['client', 'management'];
const FILES: Record<ApiName, string> = { client: 'client.yml', management: 'management.yml' };
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/**
 * Narrow allow-list for the places where the spec is wrong relative to what the real OpenZiti controller (v1.7.2,
 * controller/internal/routes) sends, or where the seed deliberately differs. Applied to the swagger before translation.
 */
const SPEC_FIXES = {
  /** required, but declared nowhere: go-swagger generates no field for them, so the real controller never sends them */
  requiredNeverSent: {
    apiSessionDetail: ['cachedUpdatedAt'],
    edgeRouterDetail: ['os', 'version', 'arch', 'buildDate', 'revision'],
    enrollmentDetail: ['details'],
  } as Record<string, string[]>,
  /** required pointers the real controller renders as null while unset */
  sentAsNull: {
    // posture_data_api_model.go: toStrFmtDateTimeP(zero) is nil; endpoint state and MFA times stay nil until reported
    postureDataBase: ['lastUpdatedAt'],
    postureDataEndpointState: ['unlockedAt', 'wokenAt'],
    postureDataMfa: ['passedAt'],
    // database_router.go GetCheckProgress: error, startTime and endTime are nil before the first check / without error
    dataIntegrityCheckDetails: ['error', 'startTime', 'endTime'],
  } as Record<string, string[]>,
  /** extra enum values: the seed writes OpenZiti's brand word as `svc` (DESIGN.md), which Weft sends by default */
  extraEnum: { mfaProviders: ['svc'] } as Record<string, string[]>,
  /** response schemas the real controller does not follow, by `api METHOD template status` */
  responses: {
    // authenticate_router.go authMfa answers a wrong code with RespondWithError (the error envelope), not `empty`
    'client POST /authenticate/mfa 401': 'apiErrorEnvelope',
    'management POST /authenticate/mfa 401': 'apiErrorEnvelope',
    // edge_router_router.go lists service edge router policies here, not service policies
    'management GET /edge-routers/{id}/service-edge-router-policies 200': 'listServiceEdgeRouterPoliciesEnvelope',
  } as Record<string, string>,
};

function applySpecFixes(spec: Spec): void {
  const parts = (name: string): Json[] => {
    const def = spec.definitions[name];
    if (!def) throw new Error(`SPEC_FIXES: no definition ${name}`);
    return [def, ...((def.allOf as Json[] | undefined) ?? [])];
  };
  for (const [name, props] of Object.entries(SPEC_FIXES.requiredNeverSent)) {
    if (!spec.definitions[name]) continue;
    for (const part of parts(name)) if (Array.isArray(part.required)) part.required = part.required.filter((r: string) => !props.includes(r));
  }
  for (const [name, props] of Object.entries(SPEC_FIXES.sentAsNull)) {
    if (!spec.definitions[name]) continue;
    for (const prop of props) {
      const owner = parts(name).find((p) => p.properties?.[prop]);
      if (!owner) throw new Error(`SPEC_FIXES: ${name} has no property ${prop}`);
      owner.properties[prop] = { ...owner.properties[prop], 'x-nullable': true };
    }
  }
  for (const [name, values] of Object.entries(SPEC_FIXES.extraEnum)) {
    if (spec.definitions[name]) spec.definitions[name].enum = [...spec.definitions[name].enum, ...values];
  }
}

export function specDir(): string {
  const tried: string[] = [];
  const env = process.env.WEFT_OPENZITI_SPEC_DIR;
  if (env) {
    if (hasSpecs(env)) return env;
    tried.push(`WEFT_OPENZITI_SPEC_DIR=${env}`);
  }
  const shared = join(REPO, '../shared/reference/openziti-edge-api');
  if (hasSpecs(shared)) return shared;
  tried.push(shared);
  const interop = join(REPO, 'test/interop');
  if (existsSync(join(interop, 'go.mod'))) {
    try {
      const dir = execFileSync('go', ['list', '-m', '-f', '{{.Dir}}', 'github.com/openziti/edge-api'], {
        cwd: interop,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 120_000,
      }).trim();
      if (dir && hasSpecs(dir)) return dir;
      tried.push(`go module dir ${dir || '(empty)'}`);
    } catch (e) {
      tried.push(`go list -m github.com/openziti/edge-api in ${interop}: ${(e as Error).message.split('\n')[0]}`);
    }
  } else tried.push(`${interop}/go.mod (absent)`);
  throw new Error(`OpenZiti swagger specs (client.yml, management.yml) not found; set WEFT_OPENZITI_SPEC_DIR. Tried: ${tried.join('; ')}`);
}

const hasSpecs = (dir: string) => existsSync(join(dir, 'client.yml')) && existsSync(join(dir, 'management.yml'));

// ---- translation ----------------------------------------------------------------------------------

const schemaId = (api: ApiName) => `https://openziti.spec/${api}.json`;
const POLY = '__polymorphic';

/** Swagger 2.0 schema node → JSON schema (draft-07) node. `plainRefs`: refs to discriminator bases stay plain. */
function translate(node: Json, api: ApiName, spec: Spec, plainRefs = false): Json {
  if (Array.isArray(node)) return node.map((n) => translate(n, api, spec, plainRefs));
  if (!node || typeof node !== 'object') return node;
  let out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (v === null && k === 'items') continue; // `items: null` (controllerSettingsList): go-swagger reads it as any
    if (k.startsWith('x-') || ['discriminator', 'example', 'examples', 'readOnly', 'xml', 'externalDocs', 'title', 'description'].includes(k)) {
      continue;
    }
    if (k === '$ref') {
      const name = /^#\/definitions\/(.+)$/.exec(String(v))?.[1];
      if (!name) throw new Error(`unsupported $ref ${String(v)}`);
      const poly = !plainRefs && spec.definitions[name]?.discriminator ? POLY : '';
      out.$ref = `${schemaId(api)}#/definitions/${name}${poly}`;
    } else if (k === 'properties' || k === 'patternProperties') {
      out[k] = Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, translate(s, api, spec)]));
    } else if (k === 'format') {
      // link hrefs are relative ("./identities/x") in the real controller too: a URI reference, not an absolute URI;
      // go-openapi has no "url" format, so go-swagger checks nothing for it
      if (v === 'uri') out.format = 'uri-reference';
      else if (v !== 'url') out.format = v;
    } else if (k === 'additionalProperties' && isBareObject(v)) {
      // go-swagger reads `additionalProperties: {type: object}` as map[string]interface{}: any value (tags, config data)
      out.additionalProperties = true;
    } else if (k === 'allOf') {
      out.allOf = (v as Json[]).map((s) => translate(s, api, spec, plainRefs));
    } else if (['items', 'additionalProperties', 'not'].includes(k) || k === 'anyOf' || k === 'oneOf') {
      out[k] = translate(v, api, spec);
    } else out[k] = v;
  }
  if (out.$ref && Object.keys(out).length > 1) {
    // draft-07 ignores siblings of $ref; swagger users mean "and"
    const { $ref, ...rest } = out;
    out = { allOf: [{ $ref }, rest] };
  }
  if (node['x-nullable'] === true) out = nullable(out);
  return out;
}

const isBareObject = (s: Json) =>
  s && typeof s === 'object' && s.type === 'object' && !s.properties && !s.additionalProperties && !s.allOf && !s.$ref;

function nullable(s: Json): Json {
  if (typeof s.type === 'string' && !s.$ref && !s.allOf) {
    const out = { ...s, type: [s.type, 'null'] };
    if (Array.isArray(s.enum)) out.enum = [...s.enum, null];
    return out;
  }
  return { anyOf: [s, { type: 'null' }] };
}

/** All definitions of one spec, plus a `<name>__polymorphic` dispatcher for every discriminator base. */
function translateDefinitions(api: ApiName, spec: Spec): Record<string, Json> {
  const defs: Record<string, Json> = {};
  for (const [name, def] of Object.entries(spec.definitions)) {
    // a definition's own allOf extends its base: that reference must not dispatch again
    defs[name] = translate(def, api, spec, true);
  }
  for (const [base, def] of Object.entries(spec.definitions)) {
    const prop = def.discriminator as string | undefined;
    if (!prop) continue;
    const subs = Object.entries(spec.definitions).filter(([, d]) => (d.allOf as Json[] | undefined)?.some((p) => p.$ref === `#/definitions/${base}`));
    const values = subs.map(([name, d]) => [String(d['x-class'] ?? name), name] as const);
    defs[base + POLY] = {
      allOf: [
        { $ref: `${schemaId(api)}#/definitions/${base}` },
        { properties: { [prop]: { enum: [...values.map(([v]) => v), base] } } },
        ...values.map(([v, name]) => ({
          if: { properties: { [prop]: { const: v } }, required: [prop] },
          then: { $ref: `${schemaId(api)}#/definitions/${name}` },
        })),
      ],
    };
  }
  return defs;
}

// ---- loading and matching -------------------------------------------------------------------------

interface Loaded {
  ajv: Ajv;
  specs: Record<ApiName, Spec>;
  templates: Record<ApiName, Template[]>;
  compiled: Map<string, ValidateFunction>;
}
let loaded: Loaded | undefined;

function load(): Loaded {
  if (loaded) return loaded;
  const dir = specDir();
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true, validateSchema: false }));
  const specs = {} as Record<ApiName, Spec>;
  const templates = {} as Record<ApiName, Template[]>;
  for (const api of APIS) {
    // go-swagger writes numbers as `!!float 65535`, a YAML 1.1 tag the 1.2 core schema does not resolve
    const spec = parse(readFileSync(join(dir, FILES[api]), 'utf8').replace(/!!float /g, '')) as Spec;
    applySpecFixes(spec);
    specs[api] = spec;
    ajv.addSchema({ $id: schemaId(api), definitions: translateDefinitions(api, spec) });
    templates[api] = Object.keys(spec.paths)
      .map((template) => ({
        template,
        regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
        params: (template.match(/\{/g) ?? []).length,
      }))
      // literal segments win over parameters (/current-identity/mfa before /{id}/...)
      .sort((a, b) => a.params - b.params || b.template.length - a.template.length);
  }
  return (loaded = { ajv, specs, templates, compiled: new Map() });
}

const BASES: Array<[string, ApiName]> = [
  ['/edge/client/v1', 'client'],
  ['/edge/management/v1', 'management'],
];
/** Paths the controller also answers at the root (OpenZiti serves them for the Client API there). */
const ROOT_PATHS = new Set(['/', '/version', '/.well-known/est/cacerts']);

function locate(urlPath: string): { api: ApiName; path: string } | undefined {
  // the Client API without its base, as the server maps it for older SDKs
  const path = clientApiUrl(urlPath).split('?')[0]!;
  for (const [base, api] of BASES) {
    if (path === base || path.startsWith(base + '/')) return { api, path: path.slice(base.length) || '/' };
  }
  const trimmed = path.replace(/\/+$/, '') || '/';
  return ROOT_PATHS.has(trimmed) ? { api: 'client', path: trimmed } : undefined;
}

// ---- the report -----------------------------------------------------------------------------------

const seen = new Set<string>();
function record(kind: 'checked' | 'skipped' | 'mismatch', key: string, why = ''): void {
  const file = process.env.WEFT_SWAGGER_REPORT;
  const line = `${kind}\t${key}\t${why}`;
  if (!file || seen.has(line)) return;
  seen.add(line);
  appendFileSync(file, line + '\n');
}

// ---- validation -----------------------------------------------------------------------------------

export interface Checked {
  method: string;
  /** the request path including the API base (query allowed) */
  path: string;
  status: number;
  contentType: string;
  body: unknown;
  text: string;
}

/**
 * Returns a readable description of every mismatch, or undefined when the response conforms (or is skipped).
 * Documented responses are checked against their schema. Every other error (an undocumented status, a Weft-only
 * route) under an API base is still checked against apiErrorEnvelope: errors have one shape everywhere.
 */
export function swaggerMismatch(r: Checked): string | undefined {
  const method = r.method.toUpperCase();
  const where = locate(r.path);
  if (!where) return (record('skipped', `root ${method} ${shorten(r.path.split('?')[0]!)} ${r.status}`, 'not under an API base'), undefined);
  const { specs, templates } = load();
  const spec = specs[where.api];
  const t = templates[where.api].find((x) => x.regex.test(where.path));
  const op = t ? spec.paths[t.template]![method.toLowerCase()] : undefined;
  const key = `${where.api} ${method} ${t?.template ?? shorten(where.path)} ${r.status}`;
  const documented = op?.responses?.[String(r.status)];
  const isError = r.status >= 400;
  let schema: Json | undefined = SPEC_FIXES.responses[key] ? { $ref: `#/definitions/${SPEC_FIXES.responses[key]}` } : documented?.schema;
  let why = !t ? 'path not in spec' : !op ? 'method not in spec' : !documented ? 'status not in spec' : 'no schema';
  if (!schema && isError) {
    schema = { $ref: '#/definitions/apiErrorEnvelope' };
    why = `${why}; checked as apiErrorEnvelope`;
  } else if (schema) why = '';
  if (!schema) return (record('skipped', key, why), undefined);
  const produces: string[] = op?.produces ?? spec.produces ?? ['application/json'];
  if (method === 'HEAD') return (record('skipped', key, 'HEAD has no body'), undefined);
  if (!/json/i.test(r.contentType) || !r.text) {
    // an error must come in the JSON envelope; other non-JSON bodies (PEM, PNG, YAML, JWT) are skipped
    if (isError && method !== 'HEAD' && produces.some((p) => /json/.test(p))) {
      return `${method} ${r.path} → ${r.status} (${key}): expected the JSON error envelope, got content-type '${r.contentType}': ${truncate(r.text, 300)}`;
    }
    return (record('skipped', key, `content-type ${r.contentType || '(none)'}`), undefined);
  }
  const validate = compile(where.api, schema);
  record('checked', key, why);
  if (validate(r.body)) return undefined;
  return `${method} ${r.path} → ${r.status} does not match the OpenZiti swagger (${key}${why ? `; ${why}` : ''}):\n${formatErrors(validate.errors ?? [], r.body)}\nbody: ${truncate(r.text, 600)}`;
}

function compile(api: ApiName, schema: Json): ValidateFunction {
  const { ajv, specs, compiled } = load();
  const cacheKey = `${api} ${JSON.stringify(schema)}`;
  let fn = compiled.get(cacheKey);
  if (!fn) compiled.set(cacheKey, (fn = ajv.compile(translate(schema, api, specs[api]))));
  return fn;
}

const shorten = (path: string) =>
  path
    .split('/')
    .map((seg) => (seg.length > 40 ? `${seg.slice(0, 20)}…` : seg))
    .join('/');

/** Throws when the response does not match the spec (WEFT_SWAGGER_SURVEY=1: only reports it, for a survey run). */
export function assertSwagger(r: Checked): void {
  const m = swaggerMismatch(r);
  if (!m) return;
  if (process.env.WEFT_SWAGGER_SURVEY === '1') return record('mismatch', m.replace(/\s*\n\s*/g, ' | '));
  throw new Error(m);
}

function formatErrors(errors: ErrorObject[], body: unknown): string {
  // the branches of nullable anyOf and discriminator if/then only repeat the real error
  const useful = errors.filter((e) => !['anyOf', 'if'].includes(e.keyword));
  const lines = [
    ...new Set(
      (useful.length ? useful : errors).map((e) => {
        const value = valueAt(body, e.instancePath);
        return `  ${e.instancePath || '(root)'} ${e.message ?? e.keyword}${e.keyword === 'additionalProperties' || e.keyword === 'required' ? ` ${JSON.stringify(e.params)}` : ''} (value: ${truncate(JSON.stringify(value) ?? 'undefined', 80)})`;
      }),
    ),
  ];
  return lines.slice(0, 20).join('\n') + (lines.length > 20 ? `\n  ... ${lines.length - 20} more` : '');
}

function valueAt(body: unknown, pointer: string): unknown {
  let v: any = body;
  for (const p of pointer.split('/').slice(1)) v = v == null ? undefined : v[p.replace(/~1/g, '/').replace(/~0/g, '~')];
  return v;
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

// ---- coverage -------------------------------------------------------------------------------------

/** The operations an official spec documents, and whether their success response is JSON. */
export function specOperations(api: ApiName): Array<{ method: string; template: string; json: boolean }> {
  const spec = load().specs[api];
  return Object.entries(spec.paths).flatMap(([template, item]) =>
    Object.keys(item)
      .filter((m) => HTTP_METHODS.includes(m))
      .map((m) => ({
        method: m.toUpperCase(),
        template,
        json: ((item[m].produces ?? spec.produces ?? ['application/json']) as string[]).some((p) => /json/.test(p)),
      })),
  );
}

/** Prints what the tests checked, what they skipped, and which documented operations they never reached. */
export function printReport(file: string): void {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'));
  const checked = new Set(lines.filter((l) => l[0] === 'checked').map((l) => l[1]!));
  const skipped = new Map<string, string>();
  for (const l of lines) if (l[0] === 'skipped' && !checked.has(l[1]!)) skipped.set(l[1]!, l[2]!);
  const { specs } = load();
  // an operation counts as covered when one of its success responses was checked
  const reachedOps = new Set([...checked].filter((k) => /\s2\d\d$/.test(k)).map((k) => k.split(' ').slice(0, 3).join(' ')));
  const missing: string[] = [];
  for (const api of APIS) {
    for (const [template, item] of Object.entries(specs[api].paths)) {
      for (const m of Object.keys(item).filter((k) => HTTP_METHODS.includes(k))) {
        const op = `${api} ${m.toUpperCase()} ${template}`;
        if (!reachedOps.has(op)) missing.push(op);
      }
    }
  }
  console.log(
    `checked (${checked.size}):\n${[...checked]
      .sort()
      .map((k) => `  ${k}`)
      .join('\n')}`,
  );
  console.log(
    `skipped (${skipped.size}):\n${[...skipped]
      .sort()
      .map(([k, why]) => `  ${k}  [${why}]`)
      .join('\n')}`,
  );
  const mismatches = [...new Set(lines.filter((l) => l[0] === 'mismatch').map((l) => l[1]!))];
  if (mismatches.length) console.log(`mismatches (${mismatches.length}):\n${mismatches.map((m) => `  ${m}`).join('\n')}`);
  console.log(
    `spec operations with no checked success response (${missing.length}):\n${missing
      .sort()
      .map((k) => `  ${k}`)
      .join('\n')}`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? process.env.WEFT_SWAGGER_REPORT;
  if (!file) throw new Error('usage: npx tsx test/support/swagger.ts <report file>');
  printReport(file);
}
