import { connect as tcpConnect } from 'node:net';
import { EdgeType, Header, message, str, u32, type Headers, type Message } from './channel/wire';
import type { Circuit } from './circuit';
import { hostTarget } from './hostTargets';
import type { LocalTerminator } from './types';

/** How long a host has to answer a dial (or a TCP connection to be made). */
export const DIAL_TIMEOUT_MS = 15_000;

/** What the dialer passes on to an SDK host in the Dial. */
const PASSED_ON = [Header.PublicKey, Header.AppData, Header.ConnectionMarker] as const;

export type HostDial = { hostKey?: Buffer } | { failure: string; cause: string };

/**
 * Connects a circuit to its terminator's host: a Dial on an SDK host's bind (its answer awaited), or a TCP connection
 * to the address a router-hosted service names. `dialer`: the dialer's headers (the public key, app data and marker
 * are passed on); `asked`: called once the host has been asked. A failure names its OpenZiti failure cause.
 */
export async function dialHost(
  terminator: LocalTerminator,
  circuit: Circuit,
  callerId: string,
  dialer: Headers,
  asked: () => void,
): Promise<HostDial> {
  if (terminator.kind === 'sdk') {
    const host = terminator.conn;
    const hostConnId = host.acceptCircuit(circuit);
    circuit.attachHost({ kind: 'sdk', conn: host, connId: hostConnId });
    const dial = message(
      EdgeType.Dial,
      [
        [Header.ConnId, u32(terminator.bindConnId)],
        [Header.RouterProvidedConnId, u32(hostConnId)],
        [Header.CallerId, str(callerId)],
        [Header.CircuitId, str(circuit.id)],
      ],
      terminator.token,
    );
    for (const h of PASSED_ON) {
      const v = dialer.get(h);
      if (v) dial.headers.set(h, Buffer.from(v));
    }
    const answer = host.channel.request(dial, DIAL_TIMEOUT_MS);
    asked();
    let reply: Message;
    try {
      reply = await answer;
    } catch (e) {
      return {
        failure: `failed to establish connection with terminator ${terminator.id}: ${(e as Error).message}`,
        cause: 'ROUTER_ERR_DIAL_TIMED_OUT',
      };
    }
    if (reply.contentType !== EdgeType.DialSuccess) {
      return {
        failure: `failed to establish connection with terminator ${terminator.id}: ${reply.body.toString('utf8') || 'dial failed'}`,
        cause: 'ROUTER_ERR_GENERIC',
      };
    }
    return { hostKey: terminator.publicKey };
  }
  const target = hostTarget(terminator.host, dialer.get(Header.AppData));
  if (typeof target === 'string') {
    asked();
    return { failure: target, cause: 'ROUTER_ERR_MISCONFIGURED_TERMINATOR' };
  }
  const socket = tcpConnect({ host: target.host, port: target.port });
  const connecting = new Promise<Error | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(new Error('timed out')), DIAL_TIMEOUT_MS);
    socket.once('connect', () => (clearTimeout(timer), resolve(undefined)));
    socket.once('error', (e) => (clearTimeout(timer), resolve(e)));
  });
  asked();
  const connected = await connecting;
  if (connected) {
    socket.destroy();
    const refused = (connected as NodeJS.ErrnoException).code === 'ECONNREFUSED';
    return {
      failure: `failed to dial ${target.host}:${target.port}: ${connected.message}`,
      cause: refused ? 'ROUTER_ERR_CONN_REFUSED' : 'ROUTER_ERR_DIAL_TIMED_OUT',
    };
  }
  if (circuit.closed) socket.destroy();
  else circuit.attachHost({ kind: 'tcp', socket });
  return {};
}
