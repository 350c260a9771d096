// The console's live event tail (`events.tail`): a tRPC subscription over Server-Sent Events, read here as a browser's
// EventSource reads it (a GET with `Accept: text/event-stream`, the session cookie and no CSRF header), frames parsed
// by hand. Changes made through the REST API arrive in order with OpenZiti's shapes; the namespace filter; a stream
// that reconnects with the last id resumes without a gap or a repeat; who may open it; what a bad id gets; which
// requests still need the CSRF header; and the bounded queue between the feed and a stream.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ConsoleClient } from '../support/consoleTrpc';
import { createUser } from '../support/users';
import { eventFeedOf, type Follower } from '../../src/main/core/ops/index';
import { EventQueue } from '../../src/main/console/routers/events';

interface Frame {
  event?: string;
  id?: string;
  data?: string;
}

/** One SSE stream: every frame as it comes (`event:`, `id:`, `data:` lines; a blank line ends a frame). */
class Sse {
  readonly frames: Frame[] = [];
  ended = false;

  private constructor(
    readonly res: Response,
    private readonly abort: AbortController,
  ) {}

  static async open(base: string, opts: { cookie?: string; input?: unknown; path?: string; headers?: Record<string, string> } = {}): Promise<Sse> {
    const query = opts.input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(opts.input))}`;
    const ac = new AbortController();
    const res = await fetch(`${base}/trpc/${opts.path ?? 'events.tail'}${query}`, {
      // what EventSource sends: no custom header of its own
      headers: { accept: 'text/event-stream', ...(opts.cookie ? { cookie: opts.cookie } : {}), ...opts.headers },
      signal: ac.signal,
    });
    const sse = new Sse(res, ac);
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) void sse.read();
    else sse.ended = true;
    return sse;
  }

  private async read(): Promise<void> {
    const reader = this.res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += value;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: Frame = {};
          for (const line of block.split('\n')) {
            if (!line || line.startsWith(':')) continue;
            const i = line.indexOf(':');
            const field = i < 0 ? line : line.slice(0, i);
            const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
            if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
            else if (field === 'event' || field === 'id') frame[field] = value;
          }
          if (Object.keys(frame).length) this.frames.push(frame);
        }
      }
    } catch {
      // closed by the test
    } finally {
      this.ended = true;
    }
  }

  /** The events (frames without an event name): their id and the event. */
  get messages(): Array<{ id: string; event: any }> {
    return this.frames.filter((f) => f.event === undefined && f.data !== undefined).map((f) => ({ id: f.id ?? '', event: JSON.parse(f.data!) }));
  }

  /** The tRPC error shape the stream ended with, if it did. */
  get error(): any {
    const f = this.frames.find((x) => x.event === 'serialized-error');
    return f && JSON.parse(f.data!);
  }

  async until<T>(find: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`timed out; frames: ${JSON.stringify(this.frames).slice(0, 3000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Waits for `connected`: the stream's position in the feed is fixed by then. */
  connected(): Promise<Frame> {
    return this.until(() => this.frames.find((f) => f.event === 'connected'));
  }

  close(): void {
    this.abort.abort();
  }
}

/** The entityChange events of one entity, each with the `committed` marker that follows it (same eventId). */
function changesOf(sse: Sse, id: string) {
  const msgs = sse.messages;
  return msgs
    .filter((m) => m.event.namespace === 'entityChange' && (m.event.finalState?.id === id || m.event.initialState?.id === id))
    .map((m) => ({ ...m, committed: msgs.find((c) => c.event.eventType === 'committed' && c.event.eventId === m.event.eventId) }));
}

describe('console: the live event tail over SSE', () => {
  let app: TestApp;
  let admin: ApiClient;
  let asAdmin: ConsoleClient;
  let base: string;
  const open: Sse[] = [];
  const stream = async (opts: Parameters<typeof Sse.open>[1] = {}) => {
    const s = await Sse.open(base, { cookie: asAdmin.cookie, ...opts });
    open.push(s);
    return s;
  };

  beforeAll(async () => {
    app = await startTestApp({ consoleAddress: '127.0.0.1:0' });
    base = app.urls.console!;
    admin = await app.adminClient();
    asAdmin = await new ConsoleClient(base).login(ADMIN_USER, ADMIN_PASSWORD);
    await createUser(admin, 'plain-user', 'plain-password-1');
    await createUser(admin, 'ops-reader', 'ops-password-1', { permissions: ['ops.read'] });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await admin?.close();
    await app?.stop();
  });

  it('streams a service created, patched and deleted through REST as entityChange events, in order, as they happen', async () => {
    const sse = await stream();
    expect(sse.res.status).toBe(200);
    expect(sse.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await sse.connected();

    const id = await admin.create('/services', { name: 'ev-svc', encryptionRequired: true, roleAttributes: ['a'] });
    // streamed, not buffered: the first change arrives while the response is still open
    await sse.until(() => changesOf(sse, id)[0]?.committed);
    expect(sse.ended).toBe(false);
    expect((await admin.patch(`/services/${id}`, { name: 'ev-svc-2' })).status).toBe(200);
    expect((await admin.del(`/services/${id}`)).status).toBe(200);
    const changes = await sse.until(() => {
      const c = changesOf(sse, id);
      return c.length === 3 && c[2]!.committed && c;
    });

    expect(changes.map((c) => c.event.eventType)).toEqual(['created', 'updated', 'deleted']);
    const [created, updated, deleted] = changes as [(typeof changes)[0], (typeof changes)[0], (typeof changes)[0]];
    for (const c of changes) {
      expect(c.event).toMatchObject({
        namespace: 'entityChange',
        eventId: c.id,
        entityType: 'services',
        isParentEvent: false,
        metadata: { author: { type: 'identity', id: expect.any(String) } },
        event_src_id: expect.any(String),
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      });
      // the commit marker follows its change at once, with the same id
      const msgs = sse.messages;
      const at = msgs.findIndex((m) => m.id === c.id && m.event.eventType === c.event.eventType);
      expect(msgs[at + 1]!.event).toEqual({
        namespace: 'entityChange',
        event_src_id: c.event.event_src_id,
        timestamp: c.event.timestamp,
        eventId: c.id,
        eventType: 'committed',
      });
      expect(msgs[at + 1]!.id).toBe(c.id);
    }
    // (null as in OpenZiti's own example of a created event; absent would do as well)
    expect(created.event.initialState ?? null).toBeNull();
    expect(created.event.finalState).toMatchObject({ id, name: 'ev-svc', encryptionRequired: true, roleAttributes: ['a'] });
    expect(updated.event.initialState).toMatchObject({ id, name: 'ev-svc' });
    expect(updated.event.finalState).toMatchObject({ id, name: 'ev-svc-2' });
    expect(deleted.event.initialState).toMatchObject({ id, name: 'ev-svc-2' });
    expect(deleted.event.finalState ?? null).toBeNull();
    // the ids are the outbox positions: increasing along the stream
    const ids = sse.messages.map((m) => Number(m.id));
    expect(ids.every((n, i) => Number.isInteger(n) && (i === 0 || n >= ids[i - 1]!))).toBe(true);
    expect(Number(created.id)).toBeLessThan(Number(updated.id));
    expect(Number(updated.id)).toBeLessThan(Number(deleted.id));
  });

  it('streams a login as an authentication event and an apiSession created event', async () => {
    const sse = await stream();
    await sse.connected();
    const rest = app.client();
    const login = await rest.login(ADMIN_USER, ADMIN_PASSWORD);
    const session = login.body.data;
    const created = await sse.until(() => sse.messages.find((m) => m.event.namespace === 'apiSession' && m.event.id === session.id));
    expect(created.event).toMatchObject({
      namespace: 'apiSession',
      event_type: 'created',
      id: session.id,
      type: 'legacy',
      token: session.token,
      identity_id: session.identity.id,
      ip_address: expect.any(String),
    });
    const auth = await sse.until(() =>
      sse.messages.find(
        (m) => m.event.namespace === 'authentication' && m.event.identity_id === session.identity.id && m.event.event_type === 'success',
      ),
    );
    expect(auth.event).toMatchObject({ type: 'password', success: true, remote_address: expect.any(String) });
    await rest.close();
  });

  it('keeps only the namespaces asked for', async () => {
    const changes = await stream({ input: { types: ['entityChange'] } });
    const sessions = await stream({ input: { types: ['apiSession', 'authentication'] } });
    await Promise.all([changes.connected(), sessions.connected()]);
    const rest = app.client();
    const createdOn = (s: Sse, sessionId: string) => s.messages.find((m) => m.event.namespace === 'apiSession' && m.event.id === sessionId);
    // a login, a service, a login: each stream has seen all three places in the feed once it has its own last one
    const before = (await rest.login(ADMIN_USER, ADMIN_PASSWORD)).body.data.id;
    const id = await admin.create('/services', { name: 'ev-filtered', encryptionRequired: true });
    const after = (await rest.login(ADMIN_USER, ADMIN_PASSWORD)).body.data.id;
    await changes.until(() => changesOf(changes, id)[0]?.committed);
    await sessions.until(() => createdOn(sessions, after));
    expect(new Set(changes.messages.map((m) => m.event.namespace))).toEqual(new Set(['entityChange']));
    expect(createdOn(sessions, before)).toBeDefined();
    expect(sessions.messages.some((m) => m.event.namespace === 'authentication')).toBe(true);
    expect(sessions.messages.every((m) => ['apiSession', 'authentication'].includes(m.event.namespace))).toBe(true);
    await rest.close();

    const bad = await stream({ input: { types: ['link'] } });
    await bad.until(() => bad.error);
    expect(bad.error.data).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
  });

  it('resumes after the last event id: what was missed arrives, nothing twice', async () => {
    const first = await stream();
    await first.connected();
    const a = await admin.create('/services', { name: 'ev-resume-a', encryptionRequired: true });
    const seen = await first.until(() => changesOf(first, a)[0]?.committed);
    const lastId = first.messages.at(-1)!.id;
    expect(Number(lastId)).toBeGreaterThanOrEqual(Number(seen.id));
    first.close();
    await first.until(() => first.ended);

    const b = await admin.create('/services', { name: 'ev-resume-b', encryptionRequired: true });
    const keys = (s: Sse) =>
      s.messages.map((m) => `${m.id}/${m.event.namespace}/${m.event.eventType ?? m.event.event_type}/${m.event.eventId ?? m.event.id ?? ''}`);

    // as tRPC's client resumes (lastEventId in the input) and as the browser's EventSource does (Last-Event-ID header)
    for (const opts of [{ input: { lastEventId: lastId } }, { headers: { 'last-event-id': lastId } }]) {
      const resumed = await stream(opts);
      const missed = await resumed.until(() => changesOf(resumed, b)[0]?.committed && changesOf(resumed, b)[0]);
      expect(missed.event.finalState).toMatchObject({ id: b, name: 'ev-resume-b' });
      expect(changesOf(resumed, a)).toEqual([]);
      expect(resumed.messages.every((m) => Number(m.id) > Number(lastId))).toBe(true);
      const before = new Set(keys(first));
      expect(keys(resumed).filter((k) => before.has(k))).toEqual([]);
    }
  });

  it('refuses a caller without the ops read permission, and one not signed in', async () => {
    const plain = await new ConsoleClient(base).login('plain-user', 'plain-password-1');
    const refused = await stream({ cookie: plain.cookie });
    await refused.until(() => refused.error);
    // OpenZiti answers insufficient access with 401 UNAUTHORIZED (core/permissions.ts), and so does the console
    expect(refused.error.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401, ziti: { code: 'UNAUTHORIZED' } });
    await refused.until(() => refused.ended);
    expect(refused.messages).toEqual([]);

    const anonymous = await stream({ cookie: undefined });
    await anonymous.until(() => anonymous.error);
    expect(anonymous.error.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });

    // ops.read is enough
    const reader = await new ConsoleClient(base).login('ops-reader', 'ops-password-1');
    const allowed = await stream({ cookie: reader.cookie });
    await allowed.connected();
    const id = await admin.create('/services', { name: 'ev-ops-reader', encryptionRequired: true });
    await allowed.until(() => changesOf(allowed, id)[0]);
    expect(allowed.error).toBeUndefined();
  });

  it('answers a lastEventId that is not a non-negative integer with BAD_REQUEST', async () => {
    for (const opts of [
      { input: { lastEventId: 'abc' } },
      { input: { lastEventId: '-1' } },
      { input: { lastEventId: '1.5' } },
      { headers: { 'last-event-id': 'x12' } },
    ]) {
      const bad = await stream(opts);
      await bad.until(() => bad.error);
      expect(bad.error.data).toMatchObject({
        code: 'BAD_REQUEST',
        httpStatus: 400,
        ziti: { code: 'COULD_NOT_VALIDATE', cause: { field: 'lastEventId' } },
      });
      expect(bad.error.data.ziti.cause.reason).toMatch(/non-negative integer/);
      await bad.until(() => bad.ended);
      expect(bad.messages).toEqual([]);
    }
    // an id past the end of the feed (another database's) starts from now
    const future = await stream({ input: { lastEventId: '999999999' } });
    await future.connected();
    const id = await admin.create('/services', { name: 'ev-future', encryptionRequired: true });
    await future.until(() => changesOf(future, id)[0]);
  });

  it('lets only an EventSource GET of a subscription through without the CSRF header', async () => {
    const cookie = asAdmin.cookie!;
    const get = (path: string, headers: Record<string, string>) => fetch(`${base}/trpc/${path}`, { headers: { cookie, ...headers } });
    const sse = { accept: 'text/event-stream' };
    // a query, even asking for an event stream
    expect((await get('session.me', sse)).status).toBe(403);
    expect((await get('session.me', {})).status).toBe(403);
    // the subscription without asking for an event stream, or batched
    expect((await get('events.tail', {})).status).toBe(403);
    expect((await get(`events.tail,events.tail?batch=1&input=${encodeURIComponent('{}')}`, sse)).status).toBe(403);
    // a mutation
    const post = await fetch(`${base}/trpc/session.logout`, {
      method: 'POST',
      headers: { cookie, ...sse, 'content-type': 'application/json' },
      body: 'null',
    });
    expect(post.status).toBe(403);
    // another origin or site, even for the subscription
    expect((await get('events.tail', { ...sse, origin: 'http://evil.example' })).status).toBe(403);
    expect((await get('events.tail', { ...sse, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    // the same origin, as a browser sends it
    const ok = await get('events.tail', { ...sse, origin: base, 'sec-fetch-site': 'same-origin' });
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
    // the session is still alive (the refused logout did nothing)
    expect((await asAdmin.query('session.me')).data).toMatchObject({ identity: { isAdmin: true } });
  });

  it('stops following the feed when the client goes away', async () => {
    const feed = eventFeedOf(app.core);
    const follow = feed.follow.bind(feed);
    const closes: Array<ReturnType<typeof vi.fn>> = [];
    const spy = vi.spyOn(feed, 'follow').mockImplementation(async (opts, deliver) => {
      const follower: Follower = await follow(opts, deliver);
      const close = vi.fn(() => follower.close());
      closes.push(close);
      return Object.assign(Object.create(follower) as Follower, { close });
    });
    try {
      const sse = await stream();
      await sse.connected();
      expect(closes).toHaveLength(1);
      expect(closes[0]).not.toHaveBeenCalled();
      sse.close();
      await expect.poll(() => closes[0]!.mock.calls.length).toBe(1);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('EventQueue: the bounded bridge from the feed to a stream', () => {
  it('holds back the feed while more than `max` events wait, and lets it go on as the stream catches up', async () => {
    const q = new EventQueue<number>(3, 10_000);
    let pushed = false;
    const push = q.push([1, 2, 3, 4, 5]).then(() => (pushed = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(pushed).toBe(false);
    expect(q.size).toBe(5);
    expect(await q.take()).toBe(1);
    expect(pushed).toBe(false);
    expect(await q.take()).toBe(2);
    await push;
    expect(pushed).toBe(true);
    const again = q.push([6]);
    expect([await q.take(), await q.take(), await q.take(), await q.take()]).toEqual([3, 4, 5, 6]);
    await again;
  });

  it('waits for events, and ends: a pending take gets undefined, a pending push returns', async () => {
    const q = new EventQueue<number>(1, 10_000);
    const taken = q.take();
    await q.push([7]);
    expect(await taken).toBe(7);
    const pending = q.take();
    q.end();
    expect(await pending).toBeUndefined();
    await q.push([8, 9, 10]);
    expect(q.size).toBe(0);

    const full = new EventQueue<number>(1, 10_000);
    const push = full.push([1, 2, 3]);
    full.end();
    await push;
  });

  it('ends the stream with SERVICE_UNAVAILABLE (which the client retries) when the stream takes nothing for too long', async () => {
    const q = new EventQueue<number>(2, 50);
    await q.push([1, 2]);
    await q.push([3]);
    await expect(q.take()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/fell behind/) });
    expect(q.size).toBe(0);
    await q.push([4]);
    await expect(q.take()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
