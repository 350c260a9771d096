import { requireAdminRead } from '../../core/auth/permissions';
import type { Core } from '../../core/core';
import { summary } from '../../core/entities/listings';
import { parseCertificate } from '../../core/pki/index';
import { authedProcedure, router } from '../trpc';

export interface CertificateExpiry {
  name: string;
  subject: string;
  notAfter: string;
  daysLeft: number;
}

/** Expiry of the controller's own certificates (root, intermediate, signing and TLS server). */
export function controllerCertificates(core: Core): CertificateExpiry[] {
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

export const dashboardRouter = router({
  /** Counts (as `/summary`), the controller's URLs and certificate expiry; lists come from `resources.list`. */
  overview: authedProcedure.query(({ ctx }) => {
    const counts = summary(ctx.zctx);
    requireAdminRead(ctx.zctx.caller);
    return { counts, urls: ctx.urls(), certificates: controllerCertificates(ctx.core) };
  }),
});
