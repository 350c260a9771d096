import type { BulkConfig } from '../components/BulkActions';
import type { ResourcePageSpec } from '../components/ResourcePage';
import { Link } from '../router';

/** A resource page whose list offers multi-select with these actions (and, optionally, more list actions). */
export function withBulk(spec: ResourcePageSpec, bulk: BulkConfig, listActions?: ResourcePageSpec['listActions']): ResourcePageSpec {
  return { ...spec, bulk, ...(listActions ? { listActions } : {}) };
}

const remove = (noun: string): BulkConfig => ({ actions: ['delete'], noun });
const tagged = (noun: string): BulkConfig => ({ actions: ['delete', 'attributes'], noun });

/** What each list offers for several selected rows. */
export const BULK = {
  identities: { actions: ['delete', 'attributes', 'state', 'archive'], noun: 'identities' } satisfies BulkConfig,
  services: tagged('services'),
  edgeRouters: tagged('edge routers'),
  postureChecks: tagged('posture checks'),
  configs: remove('configs'),
  policies: remove('policies'),
};

export const identityListActions = (
  <Link className="button secondary-button" to="/identity-import">
    Import from CSV
  </Link>
);

export const serviceListActions = (
  <Link className="button secondary-button" to="/service-wizard">
    New service (wizard)
  </Link>
);
