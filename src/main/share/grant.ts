import { badInput } from './errors';

/**
 * Everything a `weft share host` process needs to host an overlay share, and nothing that reaches the controller
 * API: the router URL and the CAs to trust, the share identity's client certificate and key, an API session of
 * that identity (the router keeps it alive while the host stays connected) and a Bind session of the share's
 * service. Printed by `weft share public --remote` as one line: base64url of this JSON.
 */
export interface ShareGrant {
  v: 1;
  /** the share token and its public URL (for messages) */
  share: string;
  url: string;
  /** tls:host:port of the edge router */
  router: string;
  /** PEM bundle of the controller's CAs */
  ca: string;
  /** PEM client certificate (chain) and private key of the share's identity */
  cert: string;
  key: string;
  apiSession: string;
  bindSession: string;
  serviceId: string;
  /** what the share was created for; `weft share host` serves this unless told otherwise */
  backendMode: 'proxy' | 'web';
  target: string;
}

const STRING_FIELDS = ['share', 'url', 'router', 'ca', 'cert', 'key', 'apiSession', 'bindSession', 'serviceId', 'target'] as const;

export function encodeGrant(grant: ShareGrant): string {
  return Buffer.from(JSON.stringify(grant), 'utf8').toString('base64url');
}

/** Parses a grant; anything else is bad input (exit 2) naming what is wrong. */
export function decodeGrant(text: string): ShareGrant {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text.trim(), 'base64url').toString('utf8'));
  } catch {
    throw badInput('<grant>: not a share grant (copy the whole line printed by weft share public --remote)');
  }
  const g = parsed as Partial<ShareGrant> | null;
  if (!g || typeof g !== 'object' || g.v !== 1) throw badInput('<grant>: not a share grant of this version of Weft');
  for (const f of STRING_FIELDS) if (typeof g[f] !== 'string' || !g[f]) throw badInput(`<grant>: the grant has no ${f}`);
  if (g.backendMode !== 'proxy' && g.backendMode !== 'web') throw badInput('<grant>: the grant has no backendMode');
  return g as ShareGrant;
}
