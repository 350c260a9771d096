// Weft's own SDK-side edge client: what an OpenZiti SDK does on an edge router connection, for services without
// end-to-end encryption (see docs/shares.md and notes on the edge protocol in src/main/router).
export { EdgeClient, EdgeListener, EncryptionNotSupportedError, type EdgeClientOptions, type ServiceSession, type SessionSource } from './edgeClient';
export { EdgeConn, type EdgeConnInfo } from './edgeConn';
export { EdgeRefusedError, HelloRefusedError, RouterLink } from './routerLink';
export { parseRouterUrl } from '../tlsDial';
