import type { Logger } from 'pino';
import { ApiSessionService, type AuthQuery } from './auth/apiSessions';
import { SecurityService } from './auth/security';
import { ServiceAccessTokens } from './policy/serviceAccessToken';
import type { Caller } from './auth/permissions';
import type { Clock } from './clock';
import type { Ctx } from './context';
import { createCertAuthenticator } from './enrollment/authenticators';
import { decorateIdentityEnrollments } from './enrollment/records';
import type { IdentityDecorator } from './entities/identities';
import { SchemaValidator } from './entities/jsonSchema';
import { NO_FRONTEND_OAUTH_CHECK, type ShareOAuthCheck } from './shares';
import { JwtSigner, type ControllerPki } from './pki/index';

/** The controller's PKI plus derived encodings served by the APIs. */
export type PkiMaterial = ControllerPki & { caBundlePkcs7: string };
import type { Row, Store } from './store/db';

export interface CoreConfig {
  dataDir: string;
  /** Public base URL of the controller API, e.g. https://127.0.0.1:1280 */
  apiPublicUrl: string;
  /** Inactivity timeout of API sessions */
  sessionTimeoutMs: number;
  /**
   * The brand word Weft sends where OpenZiti sends `ziti` (the MFA auth query's provider): `svc` as the specification
   * writes it, `ziti` for stock OpenZiti SDKs. Both spellings are accepted on input.
   */
  brand: 'svc' | 'ziti';
  /** Minimum time between two database snapshots (default 1 minute) */
  snapshotIntervalMs?: number;
}

/** The system itself as a caller (bootstrap, maintenance): full rights, no session. */
export const SYSTEM: Caller = { identityId: 'system', identityName: 'system', isAdmin: true, permissions: new Set() };

/**
 * The domain core: no HTTP, no Electron. Adapters (REST, tRPC, CLI) call into it with a Ctx naming the caller.
 * Holds no module-level state: several cores can live in one process.
 */
export class Core {
  readonly sessions = new ApiSessionService(this);
  readonly schemas = new SchemaValidator();
  /** Modules that add computed identity fields register here (batched per page). */
  readonly identityDecorators: IdentityDecorator[] = [decorateIdentityEnrollments];
  /** `/summary` counts: name -> table; modules add their tables. */
  readonly summaryTables: Record<string, string> = {
    apiSessions: 'api_sessions', authPolicies: 'auth_policies', authenticators: 'authenticators', configTypes: 'config_types',
    configs: 'configs', controllers: 'controllers', edgeRouters: 'edge_routers', identities: 'identities', services: 'services',
    cas: 'cas', enrollments: 'enrollments', routers: 'routers',
  };
  /** Answers owned by later modules (MFA, external JWT); defaults describe "not configured". */
  readonly hooks = {
    isTotpEnrolled: (_identityId: string): boolean => false,
    extJwtAuthQueries: (_session: Row): AuthQuery[] => [],
    /** OAuth options of public shares against the running frontend (set by app.ts; core/shares.ts). */
    checkShareOAuth: NO_FRONTEND_OAUTH_CHECK as ShareOAuthCheck,
  };
  /** MFA, external JWT verification, integrity runs and snapshots; implements the hooks above (auth/security.ts). */
  readonly security: SecurityService = new SecurityService(this);
  /** Signs and verifies the JWTs of Dial/Bind sessions (policy/serviceAccessToken.ts). */
  readonly serviceAccessTokens = new ServiceAccessTokens(this);

  constructor(
    readonly store: Store,
    readonly clock: Clock,
    readonly config: CoreConfig,
    readonly pki: PkiMaterial,
    readonly log: Logger,
  ) {}

  private jwtSigner?: JwtSigner;
  /** Signs the controller's own JWTs with the API server certificate's key (pki/jwtSigner.ts). */
  get jwt(): JwtSigner {
    return (this.jwtSigner ??= new JwtSigner(this.pki.server, [this.pki.intermediate.certPem, this.pki.root.certPem]));
  }

  ctx(caller: Caller): Ctx {
    return { core: this, caller };
  }

  get system(): Ctx {
    return this.ctx(SYSTEM);
  }

  /** Management `POST /authenticators` with method cert (enrollment/authenticators.ts). */
  createCertAuthenticator(ctx: Ctx, identityId: string, certPem: string | undefined, tags: object): string {
    return createCertAuthenticator(ctx, identityId, certPem, tags);
  }
}
