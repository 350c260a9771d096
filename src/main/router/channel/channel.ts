import type { Duplex } from 'node:stream';
import {
  ChannelType,
  contentTypeOf,
  decode,
  EdgeType,
  encode,
  encodeHead,
  findHeader,
  FrameDecoder,
  Header,
  i32,
  type FrameLimits,
  type Message,
} from './wire';

export interface ChannelHandlers {
  /** Edge Data frames, raw (the relay forwards them without decoding). */
  onData(frame: Buffer): void;
  /** Every other message that is not a reply to one of our requests. */
  onMessage(msg: Message): void;
  /** Called once, when the connection is gone (reason: what ended it, if it was an error). */
  onClose(reason?: Error): void;
}

export class ChannelClosedError extends Error {}

/** Hellos and their results carry this sequence number (channel v4's HelloSequence). */
export const HELLO_SEQUENCE = -1;

/** Bodies from this size on are written beside their frame's head rather than copied into one buffer. */
const LARGE_BODY = 16 * 1024;

/**
 * One OpenZiti channel over a TLS (or any duplex) stream, usable by either side: frames in and out, our own
 * sequence numbers, replies matched to requests by their ReplyFor header, headers 128–255 reflected into replies.
 */
export class Channel {
  private sequence = 0;
  private readonly pending = new Map<number, { resolve(m: Message): void; reject(e: Error): void; timer: NodeJS.Timeout }>();
  private readonly decoder: FrameDecoder;
  private handlers: ChannelHandlers;
  closed = false;
  private corked = false;
  private draining?: Promise<void>;
  /** when the last frame arrived (ms since the epoch) */
  lastRead = Date.now();

  /** `limits`: a number is the largest frame (headers included) taken. */
  constructor(
    readonly socket: Duplex,
    limits: FrameLimits | number,
    handlers: ChannelHandlers,
  ) {
    this.handlers = handlers;
    this.decoder = new FrameDecoder(limits, (frame) => this.frame(frame));
    socket.on('data', (chunk: Buffer) => {
      this.lastRead = Date.now();
      try {
        this.decoder.push(chunk);
      } catch (e) {
        this.close(e as Error);
      }
    });
    socket.on('error', (e) => this.close(e));
    socket.on('close', () => this.close());
  }

  /** Replaces the handlers (e.g. once a connection's hello has been accepted). */
  setHandlers(handlers: ChannelHandlers): void {
    this.handlers = handlers;
  }

  /** Replaces the frame limits; they apply from the next frame on, even one already received. */
  setLimits(limits: FrameLimits): void {
    this.decoder.limits = limits;
  }

  private frame(frame: Buffer): void {
    if (this.closed) return;
    if (contentTypeOf(frame) === EdgeType.Data) return this.handlers.onData(frame);
    const msg = decode(frame);
    const replyFor = findHeader(frame, Header.ReplyFor);
    if (replyFor && replyFor.length === 4) {
      const waiter = this.pending.get(frame.readInt32LE(replyFor.offset));
      if (waiter) {
        this.pending.delete(msg.headers.get(Header.ReplyFor)!.readInt32LE(0));
        clearTimeout(waiter.timer);
        return waiter.resolve(msg);
      }
    }
    this.handlers.onMessage(msg);
  }

  /** Writes a message with the next sequence number (unless it carries one, as hellos do: -1). false = back off. */
  send(msg: Message): boolean {
    if (msg.sequence === 0) msg.sequence = ++this.sequence;
    if (msg.body.length < LARGE_BODY) return this.write(encode(msg));
    // a large body goes out after its head as is (one TLS write with it, the writes being corked)
    this.write(encodeHead(msg));
    return this.write(msg.body);
  }

  /**
   * Writes an encoded frame as is. false = the socket's buffer is full: wait for drain(). Writes made in the same
   * tick (the frames of one read, relayed) leave as one TLS write.
   */
  write(frame: Buffer): boolean {
    if (this.closed) return false;
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    return this.socket.write(frame);
  }

  /** Resolves once the socket's buffer has drained (or it closed); every circuit backing off shares one wait. */
  drain(): Promise<void> {
    if (this.closed || !this.socket.writableNeedDrain) return Promise.resolve();
    this.draining ??= new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        this.draining = undefined;
        resolve();
      };
      this.socket.once('drain', done);
      this.socket.once('close', done);
    });
    return this.draining;
  }

  request(msg: Message, timeoutMs: number): Promise<Message> {
    if (this.closed) return Promise.reject(new ChannelClosedError('channel closed'));
    msg.sequence = ++this.sequence;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(msg.sequence);
        reject(new Error(`no reply to message type ${msg.contentType} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(msg.sequence, { resolve, reject, timer });
      this.send(msg);
    });
  }

  /**
   * The dialing side's handshake: sends `msg` as the hello (sequence -1) and resolves with the reply for -1
   * (whatever its content type; the caller checks it is a successful Result).
   */
  hello(msg: Message, timeoutMs: number): Promise<Message> {
    if (this.closed) return Promise.reject(new ChannelClosedError('channel closed'));
    msg.sequence = HELLO_SEQUENCE;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(HELLO_SEQUENCE);
        reject(new Error(`no answer to the hello within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(HELLO_SEQUENCE, { resolve, reject, timer });
      this.write(encode(msg));
    });
  }

  /** Answers `to`: ReplyFor = its sequence, its headers 128–255 reflected. */
  reply(to: Message, msg: Message): boolean {
    for (const [k, v] of to.headers) if (k >= 128 && k <= 255 && !msg.headers.has(k)) msg.headers.set(k, v);
    msg.headers.set(Header.ReplyFor, i32(to.sequence));
    return this.send(msg);
  }

  /** A Result (type 2) reply, as channel peers answer pings, latency probes and hellos. */
  result(to: Message, success: boolean, text = '', headers: Array<[number, Buffer]> = []): boolean {
    const msg: Message = { contentType: ChannelType.Result, sequence: 0, headers: new Map(headers), body: Buffer.from(text) };
    msg.headers.set(Header.ResultSuccess, Buffer.from([success ? 1 : 0]));
    return this.reply(to, msg);
  }

  close(reason?: Error): void {
    if (this.closed) return;
    this.closed = true;
    for (const waiter of this.pending.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(new ChannelClosedError(reason ? `channel closed: ${reason.message}` : 'channel closed'));
    }
    this.pending.clear();
    // what was written last (e.g. a refusal) still goes out; a peer that does not take it is cut off shortly
    if (this.corked) this.socket.uncork();
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.handlers.onClose(reason);
  }
}
