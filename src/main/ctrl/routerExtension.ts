// A stock router's certificates extended over its control channel (OpenZiti v1.7.2: router/state/certchecker.go and
// extendEnrollmentCerts.go on the router, controller/handler_edge_ctrl/extend_enrollment*.go). A week before its
// certificates expire, or at once with `ziti router run --extend`, the router sends CSRs for new ones
// (EnrollmentExtendRouterRequest 20302); the controller answers with new certificates in a message of its own
// (EnrollmentCertsResponse 20301; a refusal is only logged, as OpenZiti does); the router asks whether it may take them
// (EnrollmentExtendRouterVerifyRequest 20303, answered with an edge Error 20002 whose empty code means yes) and only
// then writes them. The router's record takes the new certificate at that step; the channel stays up (its TLS session
// keeps the old one) and the router presents the new one when it next connects.
import type { Logger } from 'pino';
import { confirmRouterExtension, issueRouterExtension, type Core, type RouterExtension } from '../core/dataPlane/index';
import { fingerprintSha1 } from '../core/pki/index';
import { message, type Message } from '../router/channel/wire';
import { ProtoReader, ProtoWriter } from './protobuf';
import { EdgeCtrl } from './edgeMessages';
import type { RouterControlChannel } from './routerChannel';

export const ExtensionMsg = { CertsResponse: 20301, ExtendRequest: 20302, VerifyRequest: 20303 } as const;

/** edge_ctrl_pb.Error: code 1, message 2, cause 3; no code is success. */
const edgeError = (code = '', text = ''): Message => message(EdgeCtrl.Error, [], new ProtoWriter().bytes(1, code).bytes(2, text).finish());

export class RouterExtensions {
  /** certificates issued on a channel and not yet verified by its router */
  private readonly pending = new WeakMap<RouterControlChannel, RouterExtension>();

  constructor(
    private readonly core: () => Core,
    private readonly log: Logger,
  ) {}

  /** EnrollmentExtendRouterRequest: clientCertCsr 1, serverCertCsr 2, requireVerification 3. */
  async extend(ch: RouterControlChannel, msg: Message): Promise<void> {
    const router = ch.router!;
    let csrs: { certCsr: string; serverCertCsr: string; verify: boolean };
    try {
      const r = new ProtoReader(msg.body);
      csrs = { certCsr: r.str(1), serverCertCsr: r.str(2), verify: r.bool(3) };
    } catch {
      return void this.log.warn({ router: router.id }, 'control channel: unreadable certificate extension request');
    }
    let extension: RouterExtension;
    try {
      extension = await issueRouterExtension(this.core(), router.id, router.fingerprint, csrs);
    } catch (e) {
      return void this.log.warn({ router: router.id, err: e instanceof Error ? e.message : e }, 'control channel: certificate extension refused');
    }
    if (csrs.verify) this.pending.set(ch, extension);
    // without verification (no v1.7.2 router asks so) the record takes the certificates now
    else if (!(await this.take(ch, extension))) return;
    ch.channel.send(
      message(ExtensionMsg.CertsResponse, [], new ProtoWriter().bytes(1, extension.clientChainPem).bytes(2, extension.serverChainPem).finish()),
    );
  }

  /** EnrollmentExtendRouterVerifyRequest: clientCertPem 1, the certificate the router was sent. */
  async verify(ch: RouterControlChannel, msg: Message): Promise<void> {
    let pem: string;
    try {
      pem = new ProtoReader(msg.body).str(1);
    } catch {
      return void ch.channel.reply(msg, edgeError('COULD_NOT_UNMARSHAL', 'could not unmarshal the verify request'));
    }
    if (!pem) return void ch.channel.reply(msg, edgeError('MISSING_CLIENT_PEM', 'the client certificate is missing'));
    const extension = this.pending.get(ch);
    if (!extension)
      return void ch.channel.reply(
        msg,
        edgeError('INVALID_ROUTER_STATE', 'request is not possible as the router has no outstanding enrollment requests'),
      );
    let fingerprint: string;
    try {
      fingerprint = fingerprintSha1(pem);
    } catch {
      return void ch.channel.reply(msg, edgeError('INVALID_CLIENT_PEM', 'could not parse the client certificate'));
    }
    if (fingerprint !== extension.fingerprint)
      return void ch.channel.reply(msg, edgeError('INVALID_CLIENT_PEM', 'request did not contain a matching client pem'));
    this.pending.delete(ch);
    if (!(await this.take(ch, extension)))
      return void ch.channel.reply(msg, edgeError('VERIFY_ERROR', 'the router was re-enrolled or changed meanwhile'));
    ch.channel.reply(msg, edgeError());
  }

  /** The router's record takes the new certificate; the channel (checked against the record when it changes) follows. */
  private async take(ch: RouterControlChannel, extension: RouterExtension): Promise<boolean> {
    const router = ch.router!;
    const old = router.fingerprint;
    router.fingerprint = extension.fingerprint;
    let taken = false;
    try {
      taken = await confirmRouterExtension(this.core(), router.id, old, extension);
    } finally {
      if (!taken) router.fingerprint = old;
    }
    if (taken) this.log.info({ router: router.id, fingerprint: extension.fingerprint }, 'control channel: router certificates extended');
    return taken;
  }
}
