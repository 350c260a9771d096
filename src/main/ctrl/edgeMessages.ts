// The edge and fabric control messages Weft exchanges with stock OpenZiti routers (edge_ctrl.proto, ctrl.proto,
// common/ctrl_msg of OpenZiti v1.7.2): content types, header keys, and the encoders and decoders of their bodies.
// Only parsing and encoding here; what they mean to the network is the core's (core/dataPlane).
import { createHash } from 'node:crypto';
import type { RouterApiSession, RouterModel } from '../core/dataPlane/index';
import { getStr, type Headers } from '../router/channel/wire';
import { ProtoReader, ProtoWriter } from './protobuf';

/** edge_ctrl_pb.ContentType and ctrl_pb.ContentType values Weft sends or serves. */
export const EdgeCtrl = {
  ServerHello: 20000,
  ClientHello: 20001,
  Error: 20002,
  ApiSessionAdded: 20200,
  ApiSessionUpdated: 20201,
  ApiSessionRemoved: 20202,
  ApiSessionHeartbeat: 20203,
  RequestClientReSync: 20204,
  UpdateTerminatorRequest: 20209,
  UpdateTerminatorResponse: 20210,
  RemoveTerminatorRequest: 20211,
  RemoveTerminatorResponse: 20212,
  HealthEvent: 20214,
  CreateTerminatorV2Request: 20216,
  CreateTerminatorV2Response: 20217,
  CreateCircuitV2Request: 20218,
  CreateCircuitV2Response: 20219,
  CreateTunnelCircuitV2Request: 20220,
  CreateTunnelCircuitV2Response: 20221,
  UpdateTunnelTerminatorRequest: 20408,
  UpdateTunnelTerminatorResponse: 20409,
  TunnelHealthEvent: 20412,
  CreateTunnelTerminatorRequestV2: 20413,
  CreateTunnelTerminatorResponseV2: 20414,
  DataState: 20500,
  DataStateChangeSet: 20501,
  SubscribeToDataModelRequest: 20505,
} as const;

export const Fabric = {
  Fault: 1004,
  RemoveTerminatorsRequest: 1038,
  Route: 1005,
  Unroute: 1006,
  RouteResult: 1022,
  CircuitConfirmation: 1034,
} as const;

/** Header keys: edge_ctrl_pb.Header, and ctrl_msg's create-circuit and route-result headers. */
export const CtrlMsgHeader = {
  TerminatorId: 1022,
  CheckPassed: 1023,
  RouterDataModel: 1024,
  SyncStrategyType: 1013,
  SyncStrategyState: 1014,
  PeerData: 10,
  SessionToken: 11,
  Fingerprints: 12,
  TerminatorInstanceId: 13,
  ApiSessionToken: 14,
  RespCircuitId: 11,
  RespAddress: 12,
  RespTags: 13,
  RouteResultAttempt: 1101,
  RouteResultSuccess: 1102,
  RouteResultError: 1103,
  RouteResultErrorCode: 1104,
  TerminatorLocalAddress: 1110,
  InitiatorRemoteAddress: 1113,
} as const;

/** ctrl_msg's route result error codes. */
export const RouteErrorCode = { Generic: 0, InvalidTerminator: 1, Misconfigured: 2, DialTimedOut: 3, ConnectionRefused: 4 } as const;

// ---- channel header encodings of OpenZiti's channel (message.go: EncodeStringSlice and friends), little-endian ----

export function decodeStringSlice(b: Buffer | undefined): string[] {
  if (!b || b.length === 0) return [];
  if (b.length < 4) throw new Error('invalid string slice');
  const n = b.readUInt32LE(0);
  if (n > 128) throw new Error('string slice may have at most 128 entries');
  const out: string[] = [];
  let pos = 4;
  for (let i = 0; i < n; i++) {
    if (pos + 4 > b.length) throw new Error('invalid string slice');
    const len = b.readUInt32LE(pos);
    pos += 4;
    if (pos + len > b.length) throw new Error('invalid string slice');
    out.push(b.toString('utf8', pos, pos + len));
    pos += len;
  }
  return out;
}

export function decodeU32BytesMap(b: Buffer | undefined): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  if (!b || b.length === 0) return out;
  if (b.length < 4) throw new Error('invalid map');
  const n = b.readUInt32LE(0);
  let pos = 4;
  for (let i = 0; i < n; i++) {
    if (pos + 8 > b.length) throw new Error('invalid map');
    const key = b.readUInt32LE(pos);
    const len = b.readUInt32LE(pos + 4);
    pos += 8;
    if (pos + len > b.length) throw new Error('invalid map');
    out.set(key, Buffer.from(b.subarray(pos, pos + len)));
    pos += len;
  }
  return out;
}

export function encodeU32BytesMap(m: Map<number, Buffer>): Buffer {
  const parts: Buffer[] = [u32le(m.size)];
  for (const [k, v] of m) parts.push(u32le(k), u32le(v.length), v);
  return Buffer.concat(parts);
}

export function encodeStringMap(m: Record<string, string>): Buffer {
  const entries = Object.entries(m);
  const parts: Buffer[] = [u32le(entries.length)];
  for (const [k, v] of entries) {
    const kb = Buffer.from(k);
    const vb = Buffer.from(v);
    parts.push(u32le(kb.length), kb, u32le(vb.length), vb);
  }
  return Buffer.concat(parts);
}

const u32le = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return b;
};

// ---- edge sync ----

/** ServerHello: what OpenZiti's instant sync strategy sends (sync_instant.go sendHello). */
export function serverHello(version: string): Buffer {
  return new ProtoWriter().bytes(1, version).map(2, { instant: 'true', routerModel: 'true' }).finish();
}

/** The router's edge listeners from its ClientHello: protocol -> advertised URL, and the advertised host name. */
export function parseClientHello(body: Buffer): { hostname: string; protocols: Record<string, string> } {
  const r = new ProtoReader(body);
  const protocols: Record<string, string> = {};
  let hostname = r.str(2);
  for (const l of r.messages(10)) {
    const adv = l.message(20);
    if (!adv) continue;
    const protocol = adv.str(20);
    const host = adv.str(30);
    if (!protocol || !host) continue;
    protocols[protocol] = `${protocol}://${host.includes(':') ? `[${host}]` : host}:${adv.uint(40)}`;
    hostname ||= host;
  }
  if (Object.keys(protocols).length === 0) {
    // routers before listeners were reported (OpenZiti ≤ 0.26.3): protocols and ports beside one host name
    const ports = r.strs(5);
    r.strs(3).forEach((p, i) => {
      if (hostname && ports[i]) protocols[p] = `${p}://${hostname}:${ports[i]}`;
    });
  }
  return { hostname, protocols };
}

export interface Subscription {
  currentIndex: bigint;
  renew: boolean;
  timelineId: string;
}

export function parseSubscribe(body: Buffer): Subscription {
  const r = new ProtoReader(body);
  return { currentIndex: r.bigint(1), renew: r.bool(3), timelineId: r.str(4) };
}

const PRECEDENCE: Record<string, number> = { default: 0, required: 1, failed: 2 };
const POLICY_TYPE = { Dial: 1, Bind: 2 } as const;
const RELATED = { service: 1, identity: 2, postureCheck: 3 } as const;

// ---- API session sync (legacy API sessions; OIDC sessions reach routers as JWTs) ----

function apiSession(s: RouterApiSession): ProtoWriter {
  return new ProtoWriter().bytes(1, s.token).strings(2, s.fingerprints).bytes(3, s.id).bytes(4, s.identityId);
}

/** ApiSessionAdded {isFullState = 1, apiSessions = 2}. */
export function apiSessionAdded(sessions: readonly RouterApiSession[], isFullState: boolean): Buffer {
  const w = new ProtoWriter().uint(1, isFullState);
  for (const s of sessions) w.message(2, apiSession(s));
  return w.finish();
}

/** ApiSessionUpdated {apiSessions = 1}. */
export function apiSessionUpdated(sessions: readonly RouterApiSession[]): Buffer {
  const w = new ProtoWriter();
  for (const s of sessions) w.message(1, apiSession(s));
  return w.finish();
}

/** ApiSessionRemoved {tokens = 1, ids = 2} (the router drops by token; ids parallel them). */
export function apiSessionRemoved(tokens: readonly string[], ids: readonly string[]): Buffer {
  return new ProtoWriter().strings(1, tokens).strings(2, ids).finish();
}

/** ApiSessionHeartbeat {tokens = 1}: the legacy tokens the router's SDKs are connected with. */
export function parseApiSessionHeartbeat(body: Buffer): string[] {
  return new ProtoReader(body).strs(1);
}

/** One entity of the router data model: its DataState.Event field (the oneof) and its encoded model message. */
export interface ModelEntity {
  field: number;
  body: Buffer;
  synthetic: boolean;
}

/** A service policy's related entities of one type (a ServicePolicyChange). */
interface ModelRelation {
  policyId: string;
  type: number;
  ids: string[];
}

/**
 * The router data model as entities keyed `field/id` in the order OpenZiti's controller lists them in a DataState
 * (common/router_data_model.go getDataStateAlreadyLocked: config types, configs, identities, services, posture checks,
 * service policies, public keys) and each policy's related services, posture checks and identities keyed `id/type`.
 */
export interface ModelEntries {
  entities: Map<string, ModelEntity>;
  relations: Map<string, ModelRelation>;
}

const EVENT = { identity: 10, service: 11, servicePolicy: 12, postureCheck: 13, publicKey: 14, servicePolicyChange: 16, configType: 17, config: 18 };
const ACTION = { create: 0, update: 1, delete: 2 } as const;

export function modelEntries(model: RouterModel): ModelEntries {
  const entities = new Map<string, ModelEntity>();
  const relations = new Map<string, ModelRelation>();
  const entity = (field: number, id: string, m: ProtoWriter, synthetic = false) =>
    entities.set(`${field}/${id}`, { field, body: m.finish(), synthetic });
  for (const t of model.configTypes) entity(EVENT.configType, t.id, new ProtoWriter().bytes(1, t.id).bytes(2, t.name));
  for (const c of model.configs)
    entity(EVENT.config, c.id, new ProtoWriter().bytes(1, c.id).bytes(2, c.typeId).bytes(3, c.name).bytes(4, c.dataJson));
  for (const i of model.identities) {
    const precedences = Object.fromEntries(Object.entries(i.serviceHostingPrecedences).map(([k, v]) => [k, PRECEDENCE[v] ?? 0]));
    const m = new ProtoWriter()
      .bytes(1, i.id)
      .bytes(2, i.name)
      .uint(3, PRECEDENCE[i.defaultHostingPrecedence] ?? 0)
      .uint(4, i.defaultHostingCost)
      .uintMap(5, precedences)
      .uintMap(6, i.serviceHostingCosts)
      .bytes(7, i.appDataJson);
    for (const [serviceId, configs] of Object.entries(i.serviceConfigs)) {
      m.message(8, new ProtoWriter().bytes(1, serviceId, true).message(2, new ProtoWriter().map(1, configs)));
    }
    entity(EVENT.identity, i.id, m.uint(9, i.disabled));
  }
  for (const s of model.services) {
    entity(EVENT.service, s.id, new ProtoWriter().bytes(1, s.id).bytes(2, s.name).uint(3, s.encryptionRequired).strings(4, s.configs));
  }
  for (const p of model.postureChecks) entity(EVENT.postureCheck, p.id, postureCheck(p));
  for (const p of model.policies) {
    entity(EVENT.servicePolicy, p.id, new ProtoWriter().bytes(1, p.id).bytes(2, p.name).uint(3, POLICY_TYPE[p.type]));
    const related = (type: number, ids: string[]) => relations.set(`${p.id}/${type}`, { policyId: p.id, type, ids });
    related(RELATED.service, p.services);
    related(RELATED.postureCheck, p.postureChecks);
    related(RELATED.identity, p.identities);
  }
  for (const k of model.publicKeys) {
    const kid = createHash('sha1').update(k.der).digest('hex');
    const usages = k.usages.map((u) => (u === 'jwt' ? 0 : 1));
    entity(EVENT.publicKey, kid, new ProtoWriter().bytes(1, k.der).bytes(2, kid).packed(3, usages).uint(4, 0), true);
  }
  return { entities, relations };
}

function writeEvent(w: ProtoWriter, repeated: number, action: number, e: ModelEntity): void {
  w.message(repeated, new ProtoWriter().uint(1, action).uint(3, e.synthetic).bytes(e.field, e.body, true));
}

function writeRelation(w: ProtoWriter, repeated: number, r: ModelRelation, ids: string[], add: boolean): void {
  const change = new ProtoWriter().bytes(1, r.policyId).strings(2, ids).uint(3, r.type).uint(4, add);
  writeEvent(w, repeated, ACTION.create, { field: EVENT.servicePolicyChange, body: change.finish(), synthetic: false });
}

/** The whole model as the events of one DataState, each policy followed by its services, posture checks, identities. */
export function dataStateEvents({ entities, relations }: ModelEntries): Buffer {
  const w = new ProtoWriter();
  for (const [key, e] of entities) {
    writeEvent(w, 1, ACTION.create, e);
    if (e.field !== EVENT.servicePolicy) continue;
    const id = key.slice(key.indexOf('/') + 1);
    for (const type of [RELATED.service, RELATED.postureCheck, RELATED.identity]) {
      const r = relations.get(`${id}/${type}`)!;
      if (r.ids.length || type !== RELATED.identity) writeRelation(w, 1, r, r.ids, true);
    }
  }
  return w.finish();
}

/**
 * The events of a DataState.ChangeSet that bring a router holding `before` to `after` (undefined: nothing changed).
 * Ordered so that each applies to what the router holds (common/router_data_model.go ApplyChangeSet): creates and
 * updates first (a policy before its related ids, an identity before the policies naming it), then the related ids
 * added and removed, then deletes in reverse (a policy's and an identity's relations gone before they are).
 */
export function changeSetEvents(before: ModelEntries, after: ModelEntries): Buffer | undefined {
  const w = new ProtoWriter();
  let changes = 0;
  const event = (action: number, e: ModelEntity) => {
    writeEvent(w, 3, action, e);
    changes++;
  };
  for (const [key, e] of after.entities) {
    const was = before.entities.get(key);
    if (!was) event(ACTION.create, e);
    else if (!was.body.equals(e.body) || was.synthetic !== e.synthetic) event(ACTION.update, e);
  }
  for (const key of new Set([...before.relations.keys(), ...after.relations.keys()])) {
    const was = new Set(before.relations.get(key)?.ids);
    const is = new Set(after.relations.get(key)?.ids);
    const r = (after.relations.get(key) ?? before.relations.get(key))!;
    const added = [...is].filter((id) => !was.has(id));
    const removed = [...was].filter((id) => !is.has(id));
    if (added.length) writeRelation(w, 3, r, added, true);
    if (removed.length) writeRelation(w, 3, r, removed, false);
    changes += Number(added.length > 0) + Number(removed.length > 0);
  }
  for (const [key, e] of [...before.entities].reverse()) if (!after.entities.has(key)) event(ACTION.delete, e);
  return changes ? w.finish() : undefined;
}

/** The DataState message: its events (dataStateEvents), the index they bring the router to, the timeline. */
export function dataState(events: Buffer, index: bigint, timelineId: string): Buffer {
  return Buffer.concat([events, new ProtoWriter().uint(2, index).bytes(3, timelineId).finish()]);
}

/** The DataState.ChangeSet message: its index (one more than the router holds) and its events (changeSetEvents). */
export function dataStateChangeSet(index: bigint, events: Buffer): Buffer {
  return Buffer.concat([new ProtoWriter().uint(1, index).finish(), events]);
}

/** DataState.PostureCheck with its type's subtype (the fields OpenZiti's routers evaluate). */
function postureCheck(p: RouterModel['postureChecks'][number]): ProtoWriter {
  const d = p.details;
  const m = new ProtoWriter().bytes(1, p.id).bytes(2, p.name).bytes(4, p.typeId);
  const process = (x: { osType: string; path: string; hashes?: string[] }, prints: string[]) =>
    new ProtoWriter().bytes(1, x.osType).bytes(2, x.path).strings(3, x.hashes).strings(4, prints);
  switch (p.typeId) {
    case 'MAC':
      return m.message(7, new ProtoWriter().strings(1, d.macAddresses));
    case 'MFA':
      return m.message(
        8,
        new ProtoWriter()
          .uint(1, BigInt(d.timeoutSeconds ?? -1))
          .uint(2, d.promptOnWake)
          .uint(3, d.promptOnUnlock)
          .uint(4, d.ignoreLegacyEndpoints),
      );
    case 'OS': {
      const list = new ProtoWriter();
      for (const os of d.operatingSystems ?? []) list.message(1, new ProtoWriter().bytes(1, os.type).strings(2, os.versions));
      return m.message(9, list);
    }
    case 'PROCESS':
      return d.process ? m.message(10, process(d.process, d.process.signerFingerprint ? [d.process.signerFingerprint] : [])) : m;
    case 'PROCESS_MULTI': {
      const multi = new ProtoWriter().bytes(1, d.semantic ?? 'AllOf');
      for (const x of d.processes ?? []) multi.message(2, process(x, x.signerFingerprints ?? []));
      return m.message(11, multi);
    }
    case 'DOMAIN':
      return m.message(12, new ProtoWriter().strings(1, d.domains));
    default:
      return m;
  }
}

// ---- terminators ----

const PRECEDENCE_NAMES = ['default', 'required', 'failed'] as const;

export interface CreateTerminatorRequest {
  address: string;
  sessionToken: string;
  apiSessionToken: string;
  fingerprints: string[];
  cost: number;
  precedence: (typeof PRECEDENCE_NAMES)[number];
  instanceId: string;
  peerData: Map<number, Buffer>;
}

export function parseCreateTerminatorV2(body: Buffer): CreateTerminatorRequest {
  const r = new ProtoReader(body);
  return {
    peerData: r.u32BytesMap(4),
    address: r.str(1),
    sessionToken: r.str(2),
    fingerprints: r.strs(3),
    cost: r.uint(5),
    precedence: PRECEDENCE_NAMES[r.uint(6)] ?? 'default',
    instanceId: r.str(7),
    apiSessionToken: r.str(9),
  };
}

/** CreateTerminatorResult: Success 0, FailedIdConflict 1, FailedOther 2, FailedBusy 3, FailedInvalidSession 4. */
export const TerminatorResult = { Success: 0, IdConflict: 1, Other: 2, Busy: 3, InvalidSession: 4 } as const;

export function createTerminatorV2Response(terminatorId: string, result: number, msg = ''): Buffer {
  return new ProtoWriter().bytes(1, terminatorId).uint(2, result).bytes(3, msg).finish();
}

/** ctrl_pb.RemoveTerminatorsRequest {terminatorIds 1}: a router's batch of its SDKs' ended terminators. */
export function parseRemoveTerminators(body: Buffer): string[] {
  return new ProtoReader(body).strs(1);
}

export function parseRemoveTerminator(body: Buffer): { terminatorId: string } {
  return { terminatorId: new ProtoReader(body).str(3) };
}

export function parseUpdateTerminator(body: Buffer): {
  terminatorId: string;
  cost?: number;
  precedence?: (typeof PRECEDENCE_NAMES)[number];
} {
  const r = new ProtoReader(body);
  return {
    terminatorId: r.str(3),
    cost: r.bool(7) ? r.uint(4) : undefined,
    precedence: r.bool(6) ? (PRECEDENCE_NAMES[r.uint(5)] ?? 'default') : undefined,
  };
}

/** HealthEvent {sessionToken 1, fingerprints 2, terminatorId 3, checkPassed 4}. */
export function parseHealthEvent(body: Buffer): { terminatorId: string; passed: boolean } {
  const r = new ProtoReader(body);
  return { terminatorId: r.str(3), passed: r.bool(4) };
}

// ---- a tunneler-enabled router's own terminators (its tunnel binding hosting host.v1 services) ----

/** CreateTunnelTerminatorRequestV2 {serviceId 1, address 2, peerData 3, cost 4, precedence 5, instanceId 6, …}. */
export function parseCreateTunnelTerminatorV2(body: Buffer) {
  const r = new ProtoReader(body);
  return {
    serviceId: r.str(1),
    address: r.str(2),
    peerData: r.u32BytesMap(3),
    cost: r.uint(4),
    precedence: PRECEDENCE_NAMES[r.uint(5)] ?? 'default',
    instanceId: r.str(6),
    startTime: r.bigint(8),
  };
}

/** CreateTunnelTerminatorResponseV2 {terminatorId 1, startTime 2, result 3, msg 4}. */
export function createTunnelTerminatorV2Response(terminatorId: string, startTime: bigint, result: number, msg = ''): Buffer {
  return new ProtoWriter().bytes(1, terminatorId).uint(2, startTime).uint(3, result).bytes(4, msg).finish();
}

/** UpdateTunnelTerminatorRequest {terminatorId 1, cost 2, precedence 3, updatePrecedence 4, updateCost 5}. */
export function parseUpdateTunnelTerminator(body: Buffer): ReturnType<typeof parseUpdateTerminator> {
  const r = new ProtoReader(body);
  return {
    terminatorId: r.str(1),
    cost: r.bool(5) ? r.uint(2) : undefined,
    precedence: r.bool(4) ? (PRECEDENCE_NAMES[r.uint(3)] ?? 'default') : undefined,
  };
}

/** TunnelHealthEvent: no body, the terminator id and the check's result in headers. */
export function parseTunnelHealthEvent(headers: Headers): { terminatorId: string; passed: boolean } {
  return { terminatorId: getStr(headers, CtrlMsgHeader.TerminatorId) ?? '', passed: headers.get(CtrlMsgHeader.CheckPassed)?.[0] === 1 };
}

// ---- circuits ----

/** CreateTunnelCircuitV2Request {serviceName 1, terminatorInstanceId 2, peerData 3}. */
export function parseCreateTunnelCircuitV2(body: Buffer): { serviceName: string; instanceId: string; peerData: Map<number, Buffer> } {
  const r = new ProtoReader(body);
  return { serviceName: r.str(1), instanceId: r.str(2), peerData: r.u32BytesMap(3) };
}

/** CreateTunnelCircuitV2Response {circuitId 1, address 2, peerData 3, tags 4}. */
export function createTunnelCircuitV2Response(c: {
  circuitId: string;
  ingress: string;
  peerData: Map<number, Buffer>;
  tags: Record<string, string>;
}): Buffer {
  return new ProtoWriter().bytes(1, c.circuitId).bytes(2, c.ingress).u32BytesMap(3, c.peerData).map(4, c.tags).finish();
}

export function parseCreateCircuitV2(headers: Headers): {
  sessionToken: string;
  apiSessionToken: string;
  fingerprints: string[];
  instanceId: string;
  peerData: Map<number, Buffer>;
} {
  return {
    sessionToken: getStr(headers, CtrlMsgHeader.SessionToken) ?? '',
    apiSessionToken: getStr(headers, CtrlMsgHeader.ApiSessionToken) ?? '',
    fingerprints: decodeStringSlice(headers.get(CtrlMsgHeader.Fingerprints)),
    instanceId: getStr(headers, CtrlMsgHeader.TerminatorInstanceId) ?? '',
    peerData: decodeU32BytesMap(headers.get(CtrlMsgHeader.PeerData)),
  };
}

/** ctrl_pb.DestType */
export const DestType = { Start: 0, End: 1, Link: 2 } as const;

export interface RouteSpec {
  circuitId: string;
  attempt: number;
  egress?: { binding: string; address: string; destination: string; peerData: Map<number, Buffer> };
  forwards: Array<{ src: string; dst: string; type: number }>;
  timeoutNs: bigint;
  tags: Record<string, string>;
}

export function route(r: RouteSpec): Buffer {
  const w = new ProtoWriter().bytes(1, r.circuitId).uint(2, r.attempt);
  if (r.egress) {
    const e = r.egress;
    w.message(3, new ProtoWriter().bytes(1, e.binding).bytes(2, e.address).bytes(3, e.destination).u32BytesMap(4, e.peerData));
  }
  for (const f of r.forwards) w.message(4, new ProtoWriter().bytes(1, f.src).bytes(2, f.dst).uint(3, f.type));
  return w.uint(6, r.timeoutNs).map(7, r.tags).finish();
}

export function unroute(circuitId: string, now: boolean): Buffer {
  return new ProtoWriter().bytes(1, circuitId).uint(2, now).finish();
}

/** ctrl_pb.FaultSubject */
export const FaultSubject = {
  IngressFault: 0,
  EgressFault: 1,
  LinkFault: 2,
  ForwardFault: 3,
  UnknownOwnerForwardFault: 4,
  LinkDuplicate: 5,
} as const;

export function parseFault(body: Buffer): { subject: number; id: string; iteration: number } {
  const r = new ProtoReader(body);
  return { subject: r.uint(1), id: r.str(2), iteration: r.uint(3) };
}

export function linkFault(linkId: string, iteration: number): Buffer {
  return new ProtoWriter().uint(1, FaultSubject.LinkFault).bytes(2, linkId).uint(3, iteration).finish();
}

export function parseCircuitConfirmation(body: Buffer): string[] {
  return new ProtoReader(body).strs(1);
}
