import { requireAdminRead } from '../permissions';
import type { Ctx } from '../context';
import { parseCertificate } from '../pki/index';

export interface CertificateExpiry {
  name: string;
  subject: string;
  notAfter: string;
  daysLeft: number;
}

/** Expiry of the controller's own certificates (root, intermediate, signing and TLS server). */
export function controllerCertificates(ctx: Ctx): CertificateExpiry[] {
  requireAdminRead(ctx.caller);
  const core = ctx.core;
  const now = core.clock.now().getTime();
  const certs = [
    ['Root CA', core.pki.root.certPem],
    ['Intermediate CA', core.pki.intermediate.certPem],
    ['Signing CA (enrollment)', core.pki.signing.certPem],
    ['TLS server', core.pki.server.certPem],
  ] as const;
  return certs.map(([name, pem]) => {
    const info = parseCertificate(pem);
    return { name, subject: info.subject, notAfter: info.notAfter.toISOString(), daysLeft: Math.floor((info.notAfter.getTime() - now) / 86_400_000) };
  });
}
