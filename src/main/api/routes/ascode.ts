import type { Core } from '../../core/context';
import { exportNetwork, formatNetwork, importNetwork } from '../../core/ops/index';
import { queryString, type RouteDef } from '../registry';

/**
 * The network as code (a Weft extension of the Management API, the format of `ziti ops export` / `ziti ops import`):
 * `GET /ascode` gives the network (`?format=json|yaml`: as a file), `POST /ascode/import` imports a document (`?dryRun=true`: the plan only).
 * `weft export` / `weft import` and the console use them; the core checks the caller.
 */
export function ascodeRoutes(_core: Core): RouteDef[] {
  return [
    {
      apis: ['management'],
      method: 'GET',
      path: '/ascode',
      auth: 'session',
      summary: 'Export the network in the format of `ziti ops export`: the document as data, or with ?format=json|yaml the file',
      handler: async (req) => {
        const format = queryString(req.query.format);
        const doc = await exportNetwork(req.ctx);
        if (format !== 'json' && format !== 'yaml') return { data: doc };
        const headers = { 'content-disposition': `attachment; filename="network.${format}"` };
        return { raw: { contentType: format === 'yaml' ? 'application/yaml' : 'application/json', body: formatNetwork(doc, format), headers } };
      },
    },
    {
      apis: ['management'],
      method: 'POST',
      path: '/ascode/import',
      auth: 'session',
      summary: 'Import a network document (the format of `ziti ops export`) in one transaction; ?dryRun=true returns the plan only',
      handler: async (req) => ({ data: await importNetwork(req.ctx, req.body, { dryRun: queryString(req.query.dryRun) === 'true' }) }),
    },
  ];
}
