import type { Logger } from 'pino';
import { SYSTEM, type Caller } from './auth/permissions';
import type { Clock } from './clock';
import { SchemaValidator } from './entities/jsonSchema';
import type { ShareOAuthCheck } from './shares/oauth';
import { JwtSigner, type ControllerPki } from './pki/index';
import type { Store } from './store/db';
import type { WriteSubscriber } from './entities/writeGate';

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
  /**
   * OpenZiti's OIDC authentication (core/auth/oidc.ts): served and advertised (OIDC_AUTH) unless `enabled` is false;
   * its tokens' lifetimes (default OpenZiti's: 30 minutes, 30 minutes, 24 hours)
   */
  oidc?: { enabled: boolean; accessTokenMs: number; idTokenMs: number; refreshTokenMs: number };
  /** Minimum time between two database snapshots (default 1 minute) */
  snapshotIntervalMs?: number;
  /** Checks a public share's OAuth options against the frontend this Weft runs (default: no frontend; core/shares/config.ts). */
  checkShareOAuth?: ShareOAuthCheck;
}

/** What every core operation receives: the core and who is calling. */
export interface Ctx {
  core: Core;
  caller: Caller;
  /** what the request that made this ctx does with each of its writes, in their transactions (its audit entry) */
  onWrite?: WriteSubscriber<Ctx>;
}

/**
 * A service of each core, made on its first use: services that hold their core (API sessions, security, session
 * tokens) are reached through such an accessor, so the core imports none of them (no import cycle through it).
 */
export function perCore<T>(make: (core: Core) => T): (core: Core) => T {
  const made = new WeakMap<Core, T>();
  return (core) => {
    let service = made.get(core);
    if (service === undefined) made.set(core, (service = make(core)));
    return service;
  };
}

/**
 * The domain core: no HTTP, no Electron. Adapters (REST, tRPC, CLI) call into it with a Ctx naming the caller.
 * Holds no module-level state: several cores can live in one process.
 */
export class Core {
  readonly schemas = new SchemaValidator();

  constructor(
    readonly store: Store,
    readonly clock: Clock,
    readonly config: Readonly<CoreConfig>,
    readonly pki: PkiMaterial,
    readonly log: Logger,
    /** the write gate's subscribers (core/modules.ts): what every write does in its transaction */
    readonly writeSubscribers: ReadonlyArray<WriteSubscriber<Ctx>> = [],
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
}
