import type { ExternalIdClaim } from '../entities/cas';
import type { Store } from '../store/db';
import { parseCertificate } from '../pki/index';
import { certificateDer } from '../pki/pem';
import { x509 } from '../pki/x509Provider';

/** OpenZiti's default CA identity name format. */
export const DEFAULT_IDENTITY_NAME_FORMAT = '[caName]-[commonName]';

function candidates(certPem: string, location: ExternalIdClaim['location']): string[] {
  const info = parseCertificate(certPem);
  if (location === 'COMMON_NAME') return info.subjectCN ? [info.subjectCN] : [];
  if (location === 'SAN_URI') return info.uris;
  const names = new x509.X509Certificate(certificateDer(certPem)).getExtension(x509.SubjectAlternativeNameExtension)?.names.items ?? [];
  return names.filter((n) => n.type === 'email').map((n) => n.value);
}

function matches(value: string, claim: ExternalIdClaim): boolean {
  const criteria = claim.matcherCriteria ?? '';
  switch (claim.matcher) {
    case 'PREFIX':
      return value.startsWith(criteria);
    case 'SUFFIX':
      return value.endsWith(criteria);
    case 'SCHEME':
      try {
        return new URL(value).protocol === `${criteria.replace(/:$/, '')}:`;
      } catch {
        return false;
      }
    default:
      return true;
  }
}

/**
 * The externalId a CA's `externalIdClaim` locates in a client certificate: candidates from the location, kept by the
 * matcher, split by the parser, then the one at `index`. Returns undefined when the certificate has no such claim.
 */
export function externalIdFromCertificate(certPem: string, claim: ExternalIdClaim): string | undefined {
  const values = candidates(certPem, claim.location)
    .filter((v) => matches(v, claim))
    .flatMap((v) => (claim.parser === 'SPLIT' && claim.parserCriteria ? v.split(claim.parserCriteria) : [v]))
    .filter((v) => v !== '');
  return values[claim.index ?? 0];
}

/** Expands `[caName]`, `[caId]`, `[commonName]`, `[requestedName]`, `[identityId]` in a CA's identity name format. */
export function formatIdentityName(
  format: string,
  symbols: Record<'caName' | 'caId' | 'commonName' | 'requestedName' | 'identityId', string>,
): string {
  return (format || DEFAULT_IDENTITY_NAME_FORMAT).replace(
    /\[(caName|caId|commonName|requestedName|identityId)\]/g,
    (_, k: keyof typeof symbols) => symbols[k],
  );
}

/** `name`, or `name` + a six digit counter (000001, ...) when the name is taken. */
export async function uniqueIdentityName(store: Store, name: string): Promise<string> {
  const taken = new Set(
    (
      await store.allSql<{ name: string }>(
        "SELECT name FROM identities WHERE name = ? OR (name LIKE ? ESCAPE '\\' AND length(name) = ?)",
        name,
        `${name.replace(/[\\%_]/g, '\\$&')}%`,
        name.length + 6,
      )
    ).map((r) => r.name),
  );
  if (!taken.has(name)) return name;
  for (let i = 1; ; i++) {
    const candidate = `${name}${String(i).padStart(6, '0')}`;
    if (!taken.has(candidate)) return candidate;
  }
}
