import type { ReactNode } from 'react';
import { GenericResourcePage, resourceTitle } from '../components/GenericResourcePage';
import { ResourcePage, type ResourcePageSpec } from '../components/ResourcePage';
import type { ResourceName } from '../lib/types';
import { auditLogSpec } from './auditLog';
import { BULK, identityListActions, serviceListActions, withBulk } from './bulkSpecs';
import { DashboardPage } from './DashboardPage';
import { AscodePage } from './AscodePage';
import { CertificatesPage } from './CertificatesPage';
import { DatabasePage } from './DatabasePage';
import { EventsPage } from './EventsPage';
import { MetricsPage } from './MetricsPage';
import { controllerSettingsSpec, controllersSpec } from './controllerSettings';
import { identitiesDetailSpec, servicesDetailSpec } from './detailExtensions';
import { casSpec, edgeRoutersSpec, routersSpec } from './enrollmentSpecs';
import { externalJwtSignersSpec } from './externalJwtSigners';
import { IdentityImportPage } from './IdentityImportPage';
import { apiSessionsSpec, authPoliciesSpec, configsSpec, configTypesSpec } from './foundationSpecs';
import { LiveTrafficPage } from './LiveTrafficPage';
import { MfaPage } from './MfaPage';
import { SetupKeysPage } from './SetupKeysPage';
import { NetworkPage } from './NetworkPage';
import { PolicyAdvicePage } from './PolicyAdvicePage';
import { PolicyTestsPage } from './PolicyTestsPage';
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
  { id: 'dashboard', title: 'Dashboard', group: 'Overview', render: () => <DashboardPage pageOf={pageOfType} /> },
  resourcePage('Access', withBulk(identitiesDetailSpec, BULK.identities, identityListActions)),
  { id: 'identity-import', title: 'Import from CSV', group: 'Access', render: () => <IdentityImportPage /> },
  { id: 'setup-keys', title: 'Setup keys', group: 'Access', render: () => <SetupKeysPage /> },
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
  { id: 'policy-tests', title: 'Policy tests', group: 'Policies', render: () => <PolicyTestsPage /> },
  { id: 'network', title: 'Network map', group: 'Network', render: () => <NetworkPage /> },
  { id: 'live', title: 'Live traffic', group: 'Network', render: () => <LiveTrafficPage /> },
  resourcePage('Network', withBulk(edgeRoutersSpec, BULK.edgeRouters)),
  resourcePage('Network', routersSpec),
  { id: 'shares', title: 'Public shares', group: 'Network', render: () => <SharesPage /> },
  { id: 'events', title: 'Events', group: 'Operations', render: () => <EventsPage /> },
  { id: 'metrics', title: 'Metrics', group: 'Operations', render: () => <MetricsPage /> },
  resourcePage('Operations', apiSessionsSpec),
  resourcePage('Operations', sessionsSpec),
  resourcePage('Operations', controllersSpec),
  resourcePage('Operations', controllerSettingsSpec),
  { id: 'database', title: 'Database', group: 'Operations', render: () => <DatabasePage /> },
  { id: 'ascode', title: 'Export and import', group: 'Operations', render: () => <AscodePage /> },
  { id: 'certificates', title: 'Certificates', group: 'Operations', render: () => <CertificatesPage /> },
  resourcePage('Operations', auditLogSpec),
];

/** The types with a page spec of their own (above). */
export const SPEC_RESOURCES: ReadonlySet<string> = new Set(PAGES.flatMap((p) => (p.spec ? [p.spec.resource] : [])));

/**
 * The navigation's "More" group: every console type (as the server lists them) without a page spec of its own, by
 * name, at `/<resource>` unless a page above has that id.
 */
export function morePages(names: readonly ResourceName[]): Array<{ id: string; title: string }> {
  return names.filter((n) => !SPEC_RESOURCES.has(n) && !PAGES.some((p) => p.id === n)).map((n) => ({ id: n, title: resourceTitle(n) }));
}

/** The page over a type: its own, or the generated one of the "More" group. */
export function pageOfType(resource: string, names: readonly ResourceName[]): { id: string; title: string } | undefined {
  const own = PAGES.find((p) => p.spec?.resource === resource);
  return own ? { id: own.id, title: own.title } : morePages(names).find((p) => p.id === resource);
}

/**
 * The page generated from `resources.describe` for a path no page above has: `/<resource>/...` for a type of the
 * "More" group, `/generic/<resource>/...` for any console type (pages with a spec included, e.g. to compare them).
 */
export function genericPage(segments: string[], names: readonly ResourceName[]): ReactNode | undefined {
  const known = (n: string | undefined): n is ResourceName => !!n && (names as readonly string[]).includes(n);
  if (segments[0] === 'generic' && known(segments[1])) {
    const resource = segments[1];
    return <GenericResourcePage key={resource} resource={resource} path={`generic/${resource}`} params={segments.slice(2)} />;
  }
  const more = segments[0];
  if (known(more) && morePages(names).some((p) => p.id === more)) {
    return <GenericResourcePage key={more} resource={more} path={more} params={segments.slice(1)} />;
  }
  return undefined;
}
