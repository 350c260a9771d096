import type { ReactNode } from 'react';
import { ResourcePage, type ResourcePageSpec } from '../components/ResourcePage';
import { auditLogSpec } from './auditLog';
import { BULK, identityListActions, serviceListActions, withBulk } from './bulkSpecs';
import { DashboardPage } from './DashboardPage';
import { DatabasePage } from './DatabasePage';
import { controllerSettingsSpec, controllersSpec } from './controllerSettings';
import { identitiesDetailSpec, servicesDetailSpec } from './detailExtensions';
import { casSpec, edgeRoutersSpec, routersSpec } from './enrollmentSpecs';
import { externalJwtSignersSpec } from './externalJwtSigners';
import { IdentityImportPage } from './IdentityImportPage';
import { apiSessionsSpec, authPoliciesSpec, configsSpec, configTypesSpec } from './foundationSpecs';
import { LiveTrafficPage } from './LiveTrafficPage';
import { MfaPage } from './MfaPage';
import { NetworkPage } from './NetworkPage';
import { PolicyAdvicePage } from './PolicyAdvicePage';
import { ServiceWizardPage } from './ServiceWizardPage';
import { postureChecksSpec } from './postureChecks';
import { SharesPage } from './SharesPage';
import { edgeRouterPoliciesSpec, serviceEdgeRouterPoliciesSpec, servicePoliciesSpec } from './policySpecs';
import { sessionsSpec } from './sessions';
import { terminatorsSpec } from './terminators';

export const PAGE_GROUPS = ['Overview', 'Access', 'Services', 'Policies', 'Network', 'Operations'] as const;

/** A page of the console: `#/<id>/<params...>`. */
export interface PageDef {
  id: string;
  title: string;
  group: (typeof PAGE_GROUPS)[number];
  render(params: string[]): ReactNode;
  /** the spec of a page over one resource type (its table and form, through `resources.*`) */
  spec?: ResourcePageSpec;
}

const resourcePage = (group: PageDef['group'], spec: ResourcePageSpec): PageDef => ({
  id: spec.path,
  title: spec.title,
  group,
  spec,
  render: (params) => <ResourcePage key={`${spec.path}/${params.join('/')}`} spec={spec} params={params} />,
});

/** Every page, in navigation order. A new resource page is a spec plus one line here. */
export const PAGES: PageDef[] = [
  { id: 'dashboard', title: 'Dashboard', group: 'Overview', render: () => <DashboardPage /> },
  resourcePage('Access', withBulk(identitiesDetailSpec, BULK.identities, identityListActions)),
  { id: 'identity-import', title: 'Import from CSV', group: 'Access', render: () => <IdentityImportPage /> },
  resourcePage('Access', authPoliciesSpec),
  resourcePage('Access', externalJwtSignersSpec),
  resourcePage('Access', casSpec),
  { id: 'mfa', title: 'My MFA', group: 'Access', render: () => <MfaPage /> },
  resourcePage('Services', withBulk(servicesDetailSpec, BULK.services, serviceListActions)),
  { id: 'service-wizard', title: 'New service (wizard)', group: 'Services', render: () => <ServiceWizardPage /> },
  resourcePage('Services', terminatorsSpec),
  resourcePage('Services', withBulk(configsSpec, BULK.configs)),
  resourcePage('Services', configTypesSpec),
  resourcePage('Policies', withBulk(servicePoliciesSpec, BULK.policies)),
  resourcePage('Policies', withBulk(edgeRouterPoliciesSpec, BULK.policies)),
  resourcePage('Policies', withBulk(serviceEdgeRouterPoliciesSpec, BULK.policies)),
  resourcePage('Policies', withBulk(postureChecksSpec, BULK.postureChecks)),
  { id: 'policy-advice', title: 'Policy advice', group: 'Policies', render: (p) => <PolicyAdvicePage key={p.join('/')} params={p} /> },
  { id: 'network', title: 'Network map', group: 'Network', render: () => <NetworkPage /> },
  { id: 'live', title: 'Live traffic', group: 'Network', render: () => <LiveTrafficPage /> },
  resourcePage('Network', withBulk(edgeRoutersSpec, BULK.edgeRouters)),
  resourcePage('Network', routersSpec),
  { id: 'shares', title: 'Public shares', group: 'Network', render: () => <SharesPage /> },
  resourcePage('Operations', apiSessionsSpec),
  resourcePage('Operations', sessionsSpec),
  resourcePage('Operations', controllersSpec),
  resourcePage('Operations', controllerSettingsSpec),
  { id: 'database', title: 'Database', group: 'Operations', render: () => <DatabasePage /> },
  resourcePage('Operations', auditLogSpec),
];
