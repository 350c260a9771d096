import { bodyJsonSchema } from '../core/registry';
import { stringify } from 'yaml';
import { API_BASES, type ApiName, type RouteDef } from './registry';
import { WEFT_VERSION } from '../version';

export const SPEC_IDS: Record<string, ApiName> = { 'edge-client': 'client', 'edge-management': 'management' };

/** Weft's own OpenAPI 3.1 document for one API, generated from the route table and its zod schemas. */
export function openApiDocument(api: ApiName, routes: RouteDef[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes.filter((x) => x.apis.includes(api))) {
    const path = r.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const params = [...r.path.matchAll(/:([A-Za-z]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const op: Record<string, unknown> = {
      summary: r.summary,
      security: r.auth === 'none' ? [] : [{ ztSession: [] }],
      parameters: params,
      responses: { default: { description: 'an {data, meta} envelope, or {error, meta} on failure' } },
    };
    if (r.body) {
      op.requestBody = {
        content: { 'application/json': { schema: bodyJsonSchema(r.body) } },
      };
    }
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: api === 'client' ? 'Weft Edge Client API' : 'Weft Edge Management API', version: WEFT_VERSION },
    servers: [{ url: serverUrl + API_BASES[api] }],
    components: { securitySchemes: { ztSession: { type: 'apiKey', in: 'header', name: 'zt-session' } } },
    paths,
  };
}

export const toYaml = (doc: object): string => stringify(doc);
