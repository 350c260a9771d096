import type { Logger } from 'pino';
import { ApiSessionService } from './auth/apiSessions';
import { SecurityService } from './auth/security';
import { ServiceAccessTokens } from './policy/serviceAccessToken';
import { SYSTEM, type Caller } from './auth/permissions';
import type { Clock } from './clock';
import type { Ctx } from './context';
import { SchemaValidator } from './entities/jsonSchema';
import { NO_FRONTEND_OAUTH_CHECK, type ShareOAuthCheck } from './shares';
import { JwtSigner, type ControllerPki } from './pki/index';
import type { Store } from './store/db';

/** The controller's PKI plus derived encodings served by the APIs. */
export type PkiMaterial = ControllerPki & { caBundlePkcs7: string };

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
  /** Checks a public share's OAuth options against the frontend this Weft runs (default: no frontend; core/shares.ts). */
  checkShareOAuth?: ShareOAuthCheck;
}

/**
 * The domain core: no HTTP, no Electron. Adapters (REST, tRPC, CLI) call into it with a Ctx naming the caller.
 * Holds no module-level state: several cores can live in one process.
 */
export class Core {
  readonly sessions = new ApiSessionService(this);
  readonly schemas = new SchemaValidator();
  /** MFA secrets at rest, external JWT verification, integrity runs and snapshots (auth/security.ts). */
  readonly security: SecurityService = new SecurityService(this);
  /** Signs and verifies the JWTs of Dial/Bind sessions (policy/serviceAccessToken.ts). */
  readonly serviceAccessTokens = new ServiceAccessTokens(this);

  constructor(
    readonly store: Store,
    readonly clock: Clock,
    readonly config: Readonly<CoreConfig>,
    readonly pki: PkiMaterial,
    readonly log: Logger,
  ) {
    this.checkShareOAuth = config.checkShareOAuth ?? NO_FRONTEND_OAUTH_CHECK;
  }

  /** OAuth options of public shares against the frontend this Weft runs (CoreConfig.checkShareOAuth). */
  readonly checkShareOAuth: ShareOAuthCheck;

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
}
