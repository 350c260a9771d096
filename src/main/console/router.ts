import { CONSOLE_RESOURCES } from './registry';
import { resourceRouter } from './resources';
import { ascodeRouter } from './routers/ascode';
import { controllerSettingsRouter } from './routers/controllerSettings';
import { certificatesRouter } from './routers/certificates';
import { dashboardRouter } from './routers/dashboard';
import { bulkRouter } from './routers/bulk';
import { dataPlaneRouter } from './routers/dataPlane';
import { enrollmentRouter } from './routers/enrollment';
import { eventsRouter } from './routers/events';
import { identityRouter } from './routers/identities';
import { identityPostureRouter } from './routers/identityPosture';
import { identityTracingRouter } from './routers/identityTracing';
import { networkRouter } from './routers/network';
import { networkAddressRouter } from './routers/networkAddress';
import { policyRouter } from './routers/policy';
import { policyTestsRouter } from './routers/policyTests';
import { setupKeysRouter } from './routers/setupKeys';
import { rolesRouter } from './routers/roles';
import { securityRouter } from './routers/security';
import { serviceConfigOverridesRouter } from './routers/serviceConfigOverrides';
import { serviceWizardRouter } from './routers/serviceWizard';
import { sessionRouter } from './routers/session';
import { sharesRouter } from './routers/shares';
import { router } from './trpc';

/**
 * The console's tRPC API: thin procedures over the same core functions the REST adapter calls, with the caller's
 * core context (`ctx.zctx`), so every procedure is authorized by the core exactly as REST is.
 */
export const appRouter = router({
  session: sessionRouter,
  dashboard: dashboardRouter,
  dataPlane: dataPlaneRouter,
  resources: resourceRouter(CONSOLE_RESOURCES),
  roles: rolesRouter,
  identities: identityRouter,
  policy: policyRouter,
  enrollment: enrollmentRouter,
  security: securityRouter,
  shares: sharesRouter,
  identityPosture: identityPostureRouter,
  identityTracing: identityTracingRouter,
  serviceConfigOverrides: serviceConfigOverridesRouter,
  controllerSettings: controllerSettingsRouter,
  serviceWizard: serviceWizardRouter,
  network: networkRouter,
  bulk: bulkRouter,
  events: eventsRouter,
  ascode: ascodeRouter,
  certificates: certificatesRouter,
  networkAddress: networkAddressRouter,
  policyTests: policyTestsRouter,
  setupKeys: setupKeysRouter,
});

export type AppRouter = typeof appRouter;
