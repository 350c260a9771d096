import { createRequire } from 'node:module';
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { StoreUnavailableError, type Row } from './db';

export interface QueryResult {
  rows: Row[];
  rowCount: number;
}

export interface Notification {
  channel: string;
  payload: string;
}

export interface BridgeOptions {
  /** how long a connection attempt may take */
  connectTimeoutMs?: number;
  /** the longest a statement may run (PostgreSQL's statement_timeout); a lock wait gives up sooner */
  statementTimeoutMs?: number;
  /** channels LISTENed to on a second connection, reported to `onNotify` */
  listen?: string[];
  onNotify?: (n: Notification) => void;
  /** called when the listening connection is (re)established: notifications sent while it was down are lost */
  onListening?: () => void;
}

/** What a request tells the worker about the transaction it is part of. */
export type TxMark = 'begin' | 'commit' | 'rollback';

interface Reply {
  id: number;
  rows?: Row[];
  rowCount?: number;
  error?: { message: string; code?: string; detail?: string; unavailable: boolean };
}

/**
 * A synchronous PostgreSQL connection: node-postgres runs in a worker thread and the caller blocks on an Atomics
 * wait until the worker has posted the answer. This keeps the core's store synchronous (its transactions are plain
 * functions, as on SQLite); the price is that the event loop waits for each round trip (see the README).
 *
 * The worker holds one connection for statements (reconnected when lost, at most one attempt per 250 ms while the
 * server is unreachable) and, when asked, a second one that LISTENs. A transaction whose connection was lost fails
 * every further statement until it is ended, so nothing after the loss runs outside it.
 */
export class PostgresBridge {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private nextId = 0;
  private closed = false;
  private readonly waitMs: number;

  constructor(url: string, opts: BridgeOptions = {}) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const statementTimeoutMs = opts.statementTimeoutMs ?? 15_000;
    this.waitMs = statementTimeoutMs + (opts.connectTimeoutMs ?? 2_000) + 5_000;
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        pg: createRequire(import.meta.url).resolve('pg'),
        url,
        flag: this.flag.buffer,
        port: port2,
        connectTimeoutMs: opts.connectTimeoutMs ?? 2_000,
        statementTimeoutMs,
        listen: opts.listen ?? [],
      },
      transferList: [port2],
    });
    this.worker.on('message', (m: { notify?: Notification; listening?: boolean }) => {
      if (m.notify) opts.onNotify?.(m.notify);
      if (m.listening) opts.onListening?.();
    });
    this.worker.on('error', (e) => process.emitWarning(`PostgreSQL worker failed: ${e.message}`));
    this.worker.unref();
    this.port.unref();
  }

  /** Runs `text` (one statement with $n parameters, or several without) and waits for its result. */
  query(text: string, params: unknown[] = [], opts: { name?: string; tx?: TxMark } = {}): QueryResult {
    if (this.closed) throw new StoreUnavailableError('the PostgreSQL store is closed');
    const id = ++this.nextId;
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage({ id, text, params, name: opts.name, tx: opts.tx });
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      // the worker posts before it raises the flag: drain after lowering it, so no answer is missed
      Atomics.store(this.flag, 0, 0);
      for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
        const reply = m.message as Reply;
        if (reply.id !== id) continue; // the late answer of a request given up on
        if (reply.error) throw toError(reply.error);
        return { rows: reply.rows!, rowCount: reply.rowCount ?? 0 };
      }
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(this.flag, 0, 0, left) === 'timed-out') {
        throw new StoreUnavailableError('PostgreSQL did not answer in time');
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.postMessage({ close: true });
    void this.worker.terminate();
  }
}

function toError(e: NonNullable<Reply['error']>): Error {
  if (e.unavailable) return new StoreUnavailableError(`PostgreSQL is unavailable: ${e.message}`);
  return Object.assign(new Error(e.message), { code: e.code, detail: e.detail });
}

/**
 * The worker (CommonJS, evaluated from this string so that it runs the same under tsx, vitest and a bundle).
 * Types: int8 and numeric become numbers (counts, sums), booleans 1/0 and JSON stays text, as SQLite gives them.
 */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const pg = require(workerData.pg);
const { url, port, connectTimeoutMs, statementTimeoutMs, listen } = workerData;
const flag = new Int32Array(workerData.flag);
const asText = (v) => v;
const types = {
  getTypeParser(oid, format) {
    if (oid === 20 || oid === 1700) return (v) => Number(v);
    if (oid === 16) return (v) => (v === 't' ? 1 : 0);
    if (oid === 114 || oid === 3802) return asText;
    return pg.types.getTypeParser(oid, format);
  },
};
const options = () => ({
  connectionString: url,
  types,
  connectionTimeoutMillis: connectTimeoutMs,
  statement_timeout: statementTimeoutMs,
  lock_timeout: Math.max(1000, statementTimeoutMs - 5000),
  application_name: 'weft',
});
// connection-level failures: the server is down, restarting or unreachable (class 08, 57P0x, 53300 too many clients)
const UNAVAILABLE = /^(08|57P0|53300|ECONN|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE)/;
const lostMessage = /Connection terminated|connection timeout|not queryable|Client has encountered a connection error/i;
const unavailable = (e) => UNAVAILABLE.test(String(e.code || '')) || lostMessage.test(String(e.message));

let client;
let downUntil = 0;
let txClient; // the connection of the open transaction
let txOpen = false;

async function connection() {
  if (client) return client;
  if (Date.now() < downUntil) throw Object.assign(new Error('the server was unreachable moments ago'), { code: 'ECONNREFUSED' });
  const c = new pg.Client(options());
  c.on('error', () => { if (client === c) client = undefined; });
  try {
    await c.connect();
  } catch (e) {
    downUntil = Date.now() + 250;
    c.end().catch(() => undefined);
    throw e;
  }
  client = c;
  return c;
}

async function run(req) {
  if (txOpen && req.tx !== 'begin' && client !== txClient) {
    // the transaction's connection was lost: it is gone, and nothing of it may run on another connection
    if (req.tx === 'rollback') { txOpen = false; return { rows: [], rowCount: 0 }; }
    if (req.tx === 'commit') txOpen = false;
    throw Object.assign(new Error('the connection was lost during the transaction'), { code: '08006' });
  }
  const c = await connection();
  const r = await c.query(req.name ? { name: req.name, text: req.text, values: req.params } : { text: req.text, values: req.params });
  if (req.tx === 'begin') { txOpen = true; txClient = c; }
  if (req.tx === 'commit' || req.tx === 'rollback') txOpen = false;
  const last = Array.isArray(r) ? r[r.length - 1] : r;
  return { rows: last.rows || [], rowCount: last.rowCount || 0 };
}

port.on('message', async (req) => {
  if (req.close) {
    port.close();
    if (client) await client.end().catch(() => undefined);
    if (listener) await listener.end().catch(() => undefined);
    process.exit(0);
  }
  let reply;
  try {
    reply = { id: req.id, ...(await run(req)) };
  } catch (e) {
    const lost = unavailable(e);
    if (lost && client) { const c = client; client = undefined; c.end().catch(() => undefined); }
    if (req.tx === 'begin' && !lost && client) txOpen = false;
    reply = { id: req.id, error: { message: String(e.message), code: e.code, detail: e.detail, unavailable: lost } };
  }
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});

let listener;
async function startListening() {
  const c = new pg.Client(options());
  c.on('notification', (n) => parentPort.postMessage({ notify: { channel: n.channel, payload: n.payload || '' } }));
  c.on('error', () => undefined);
  c.on('end', () => { if (listener === c) { listener = undefined; setTimeout(startListening, 250); } });
  try {
    await c.connect();
    for (const ch of listen) await c.query('LISTEN ' + ch);
    listener = c;
    parentPort.postMessage({ listening: true });
  } catch {
    c.end().catch(() => undefined);
    setTimeout(startListening, 250);
  }
}
if (listen.length) startListening();
`;
