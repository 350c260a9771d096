import { createCsr } from '../core/pki/index';
import { SHARE_TAG, type ShareConfigData } from '../core/shares/index';
import type { ShareGrant } from './grant';
import { ShareCliError } from './errors';
import { ApiAnswerError, ManagementClient, overlayPartNames, type ShareIds } from './managementClient';
import type { OverlayOffer } from './runtimeFile';

export interface OverlayShare {
  ids: ShareIds;
  grant: ShareGrant;
  /** how long the grant's API session lives without a connected host */
  sessionSeconds?: number;
}

/**
 * Creates an overlay share through the Management API: its config (`overlay: true`) and service (no end-to-end
 * encryption), then what lets it be hosted through the built-in router and reached by the frontend, all named after
 * the token and tagged like the config and service, and removed with them (ManagementClient.deleteShare):
 *
 * - an identity `share-<token>` (non-admin), enrolled (OTT) with a key made here, that may only Bind the service
 *   (service policy `share-<token>-bind`);
 * - the frontend's identity may Dial it (service policy `share-<token>-dial`);
 * - both identities may use the built-in router (edge router policy `share-<token>`), and so may the service
 *   (service edge router policy `share-<token>`).
 *
 * Then it logs in as the share identity (certificate) and creates a Bind session: with those, the host needs no
 * access to the API at all (ShareGrant). A failure removes everything created.
 */
export async function createOverlayShare(
  admin: ManagementClient,
  data: ShareConfigData,
  offer: OverlayOffer,
  publicUrl: string,
): Promise<OverlayShare> {
  const tags = { [SHARE_TAG]: true };
  const names = overlayPartNames(data.token);
  const ids = await admin.createShare({ ...data, overlay: true });
  try {
    const identityId = (
      await admin.call<{ id: string }>('POST', '/identities', {
        name: names.identity,
        type: 'Default',
        isAdmin: false,
        roleAttributes: [],
        enrollment: { ott: true },
        tags,
      })
    ).id;
    const identity = await admin.call<{ enrollment?: { ott?: { token?: string } } }>('GET', `/identities/${identityId}`);
    const ottToken = identity.enrollment?.ott?.token;
    if (!ottToken) throw new Error('the share identity has no one-time enrollment token');
    const { csrPem, keyPem } = await createCsr({ commonName: names.identity });
    const enrolled = await admin.call<{ cert: string }>('POST', '/enroll/ott', { token: ottToken, clientCsr: csrPem }, false, 'client');

    const service = [`@${ids.serviceId}`];
    const router = [`@${offer.routerId}`];
    await admin.call('POST', '/service-policies', {
      name: names.bindPolicy,
      type: 'Bind',
      semantic: 'AnyOf',
      identityRoles: [`@${identityId}`],
      serviceRoles: service,
      tags,
    });
    await admin.call('POST', '/service-policies', {
      name: names.dialPolicy,
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${offer.frontendIdentityId}`],
      serviceRoles: service,
      tags,
    });
    await admin.call('POST', '/edge-router-policies', {
      name: names.edgeRouterPolicy,
      semantic: 'AnyOf',
      identityRoles: [`@${identityId}`, `@${offer.frontendIdentityId}`],
      edgeRouterRoles: router,
      tags,
    });
    await admin.call('POST', '/service-edge-router-policies', {
      name: names.serviceEdgeRouterPolicy,
      semantic: 'AnyOf',
      serviceRoles: service,
      edgeRouterRoles: router,
      tags,
    });

    const host = await ManagementClient.certificateLogin(admin.runtime, { ca: admin.ca, cert: enrolled.cert, key: keyPem }, 'client');
    try {
      const bind = await host.call<{ token: string }>('POST', '/sessions', { serviceId: ids.serviceId, type: 'Bind' });
      return {
        ids,
        sessionSeconds: host.sessionSeconds,
        grant: {
          v: 1,
          share: data.token,
          url: publicUrl,
          router: offer.router,
          ca: admin.ca,
          cert: enrolled.cert,
          key: keyPem,
          apiSession: host.apiSession,
          bindSession: bind.token,
          serviceId: ids.serviceId,
          backendMode: data.backendMode,
          target: data.target,
        },
      };
    } finally {
      await host.close({ keepSession: true });
    }
  } catch (err) {
    await admin.deleteShare(ids.configId).catch(() => undefined);
    // the config and service were accepted: whatever failed now is no fault of the command line
    const why = err instanceof ApiAnswerError ? `${err.message} (HTTP ${err.status})` : (err as Error).message;
    throw new ShareCliError(`could not set up the overlay share (${why}); nothing was left behind`);
  }
}
