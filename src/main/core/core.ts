import type { Logger } from 'pino';
import { SYSTEM, type Caller } from './permissions';
import type { Clock } from './clock';
import { SchemaValidator } from './jsonSchema';
import type { RoleKind } from './kinds';
import { JwtSigner, type ControllerPki } from './pki/index';
import type { Migration, Row, Store } from './store/db';
import type { Codec } from './store/rows';

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
  /** The schema this Weft runs (the registry's migrations): what a snapshot of a PostgreSQL network is written with */
  schemaMigrations?: readonly Migration[];
  /**
   * How the shares engine checks a public share's options against the frontend this Weft runs: its `ShareOAuthCheck`
   * (core/shares/oauth.ts), given by app.ts and used by shares/config.ts; none: no frontend. The core only carries it:
   * the function's type is the shares engine's, floors above the context (docs/architecture.md, "Floors").
   */
  checkShareOAuth?: (oauth: never) => unknown;
}

/** What a write changed: a row created, updated (PUT or PATCH) or deleted. */
export type GateOp = 'create' | 'update' | 'patch' | 'delete';

/** The facts of a resource type the gate's subscribers use (every ResourceDef has them). */
export interface WrittenType {
  entity: string;
  table: string;
  roleKind?: RoleKind;
  /** API field -> column; `shown: false`: never presented (and never put into change events) */
  columns: Record<string, { column: string; codec: Codec; shown?: boolean }>;
}

/**
 * One write of a resource, as the generic write path hands it to the gate: inside the write's transaction, with the
 * rows as they were (`before`, none for a create) and as they are now (`after`, none for a delete).
 */
export interface Write<C = unknown> {
  ctx: C;
  def: WrittenType;
  op: GateOp;
  id: string;
  before?: Row;
  after?: Row;
  /**
   * The parsed body the write was given (create, update, patch; none for a delete): what a subscriber needs beyond the
   * row, e.g. an identity's `enrollment` (no column of its own).
   */
  input?: Readonly<Record<string, unknown>>;
}

/**
 * What must happen with every write, in its transaction (it commits or rolls back with it): the policy index, the
 * audit log, the outbox of change events. Registered by the core's modules (core/modules.ts), and per request by an
 * adapter (`ctx.onWrite`: the request's audit entry).
 */
export type WriteSubscriber<C = unknown> = (w: Write<C>) => Promise<void> | void;

/** What every core operation receives: the core and who is calling. */
export interface Ctx {
  core: Core;
  caller: Caller;
  /** what the request that made this ctx does with each of its writes, in their transactions (its audit entry) */
  onWrite?: WriteSubscriber<Ctx>;
  /**
   * Policy roles may name entities by name (`@laptop-1`), resolved to `@id` before the write (policy/roleNames.ts):
   * the console's input. REST leaves it unset and keeps OpenZiti's `@id` roles.
   */
  roleNames?: boolean;
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
    config: Readonly<CoreConfig>,
    pki: PkiMaterial,
    readonly log: Logger,
    /** the write gate's subscribers (core/modules.ts): what every write does in its transaction */
    readonly writeSubscribers: ReadonlyArray<WriteSubscriber<Ctx>> = [],
  ) {
    this.material = pki;
    this.settings = config;
  }

  private settings: Readonly<CoreConfig>;
  get config(): Readonly<CoreConfig> {
    return this.settings;
  }

  /**
   * The API's public URL changed (the operator chose another address to advertise, ops/networkAddress.ts): what
   * JWTs, /version and the OIDC issuer name from now on.
   */
  setApiPublicUrl(url: string): void {
    this.settings = { ...this.settings, apiPublicUrl: url };
  }

  private material: PkiMaterial;
  /** The controller's PKI: its CAs and this node's server certificate (replaced when renewed). */
  get pki(): PkiMaterial {
    return this.material;
  }

  /**
   * Takes a renewed server certificate (ops/certificateRenewal.ts): same key, so JWTs signed before still verify
   * (their `kid` names a retired certificate of that key).
   */
  replaceServerCertificate(pki: ControllerPki): void {
    this.material = { ...pki, caBundlePkcs7: this.material.caBundlePkcs7 };
    this.jwtSigner = undefined;
  }

  private jwtSigner?: JwtSigner;
  /** Signs the controller's own JWTs with the API server certificate's key (pki/jwtSigner.ts). */
  get jwt(): JwtSigner {
    return (this.jwtSigner ??= new JwtSigner(
      this.pki.server,
      [this.pki.intermediate.certPem, this.pki.root.certPem],
      this.pki.retiredServerCertPems,
    ));
  }

  ctx(caller: Caller): Ctx {
    return { core: this, caller };
  }

  get system(): Ctx {
    return this.ctx(SYSTEM);
  }
}
