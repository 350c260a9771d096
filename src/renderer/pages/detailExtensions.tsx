import { ServiceAccessPanel } from '../components/AccessExplanation';
import { withPanels } from '../components/ResourcePage';
import { servicesSpec } from './foundationSpecs';
import { IdentityPosture } from './identityPosture';
import { identitiesSpec } from './identities';
import { IdentityServiceConfigs } from './identityServiceConfigs';
import { IdentityTracing } from './identityTracing';
import { ServiceTerminators } from './terminators';

/** Identities with their posture, failed service requests, tracing and service config overrides. */
export const identitiesDetailSpec = withPanels(identitiesSpec, (e) => (
  <>
    <IdentityPosture identity={e} />
    <IdentityTracing identity={e} />
    <IdentityServiceConfigs identity={e} />
  </>
));

/** Services with the terminators that host them, and who may dial them (with the "why" of one of them). */
export const servicesDetailSpec = withPanels(servicesSpec, (e) => (
  <>
    <ServiceAccessPanel serviceId={e.id} serviceName={e.name} />
    <ServiceTerminators service={e} />
  </>
));
