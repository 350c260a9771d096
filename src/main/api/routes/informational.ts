import type { Core } from '../../core/context';
import { notFound } from '../../core/errors';
import { BUILD_DATE, REVISION, WEFT_VERSION } from '../../version';
import { openApiDocument, SPEC_IDS, toYaml } from '../openapi';
import { API_BASES, queryString, type ApiName, type RouteDef } from '../registry';

const both: ApiName[] = ['client', 'management'];

export const ENUMERATED_CAPABILITIES = ['OIDC_AUTH', 'HA_CONTROLLER'];

/**
 * GET /version. With OIDC authentication on (api.oidc), OpenZiti's `edge-oidc` API and the OIDC_AUTH capability are
 * listed, as OpenZiti lists them when its OIDC binding is configured: SDKs that know it then log in through /oidc.
 */
export function versionInfo(core: Core) {
  const url = core.config.apiPublicUrl;
  const v1 = (path: string) => ({ v1: { apiBaseUrls: [url + path], path, version: 'v1' } });
  const entry = (api: ApiName) => v1(API_BASES[api]);
  const oidc = core.config.oidc?.enabled !== false;
  return {
    apiVersions: {
      edge: entry('client'),
      'edge-client': entry('client'),
      'edge-management': entry('management'),
      ...(oidc ? { 'edge-oidc': v1('/oidc') } : {}),
    },
    buildDate: BUILD_DATE,
    capabilities: oidc ? ['OIDC_AUTH'] : [],
    revision: REVISION,
    runtimeVersion: `node ${process.version}`,
    version: WEFT_VERSION,
  };
}

/** Version, capabilities, protocols, specs and the EST CA bundle: open to everyone. */
export function informationalRoutes(core: Core, allRoutes: () => RouteDef[]): RouteDef[] {
  const specEntity = (id: string) => ({
    _links: { self: { href: `./specs/${id}` }, spec: { href: `./specs/${id}/spec` } },
    id,
    name: id,
    createdAt: BUILD_DATE.replace(' ', 'T') + 'Z',
    updatedAt: BUILD_DATE.replace(' ', 'T') + 'Z',
    tags: {},
  });
  const specId = (id: string | undefined) => {
    if (!id || !(id in SPEC_IDS)) throw notFound('spec');
    return id;
  };
  return [
    ...['/', '/version'].map((path): RouteDef => ({
      apis: both,
      method: 'GET',
      path,
      auth: 'none',
      cacheable: true,
      summary: 'Version information',
      handler: () => ({ data: versionInfo(core) }),
    })),
    {
      apis: both,
      method: 'GET',
      path: '/enumerated-capabilities',
      auth: 'none',
      summary: 'All capabilities this controller knows of',
      handler: () => ({ data: ENUMERATED_CAPABILITIES }),
    },
    {
      apis: both,
      method: 'GET',
      path: '/protocols',
      auth: 'none',
      summary: 'Protocols and addresses the controller serves',
      handler: () => ({ data: { https: { address: new URL(core.config.apiPublicUrl).host } } }),
    },
    {
      apis: both,
      method: 'GET',
      path: '/specs',
      auth: 'none',
      summary: 'List API specs',
      handler: (req) => ({
        data: Object.keys(SPEC_IDS)
          .filter((id) => SPEC_IDS[id] === req.api)
          .map(specEntity),
      }),
    },
    {
      apis: both,
      method: 'GET',
      path: '/specs/:id',
      auth: 'none',
      summary: 'Get an API spec',
      handler: (req) => ({ data: specEntity(specId(req.params.id)) }),
    },
    {
      apis: both,
      method: 'GET',
      path: '/specs/:id/spec',
      auth: 'none',
      summary: 'The OpenAPI document (JSON envelope, or YAML with Accept: text/yaml or ?format=yaml)',
      handler: (req) => {
        const doc = openApiDocument(SPEC_IDS[specId(req.params.id)]!, allRoutes(), core.config.apiPublicUrl);
        const yaml = queryString(req.query.format) === 'yaml' || /yaml/.test(String(req.headers.accept ?? ''));
        return yaml ? { raw: { contentType: 'text/yaml; charset=utf-8', body: toYaml(doc) } } : { data: JSON.stringify(doc) };
      },
    },
    {
      apis: both,
      method: 'GET',
      path: '/.well-known/est/cacerts',
      auth: 'none',
      summary: 'The CA bundle as base64 PKCS#7 (EST)',
      handler: () => ({
        raw: { contentType: 'application/pkcs7-mime', body: core.pki.caBundlePkcs7, headers: { 'content-transfer-encoding': 'base64' } },
      }),
    },
  ];
}
