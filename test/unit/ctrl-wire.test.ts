// The control channel's wire facts: the capability mask as Go's big.Int.Bytes() writes it, u64 header values (the
// heartbeats' nanoseconds), the bounds on what comes before a hello (shared with the built-in router's SDK side), and
// the listener's addresses from the `ctrl:` config section.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/main/config';
import { Capability, capabilityMask, ctrlAddresses, tlsAddress } from '../../src/main/ctrl/index';
import {
  ChannelType,
  encode,
  FrameDecoder,
  FrameError,
  getU64,
  Header,
  HELLO_LIMITS,
  HELLO_MAX_PART,
  message,
  PREFIX_BYTES,
  str,
  u64,
} from '../../src/main/router/channel/wire';

describe('control channel wire', () => {
  it('writes the capability mask as big-endian bytes without leading zeros (Go big.Int.Bytes)', () => {
    expect(capabilityMask(Object.values(Capability))).toEqual(Buffer.from([0x1e]));
    expect(capabilityMask([1, 2, 3])).toEqual(Buffer.from([0x0e]));
    expect(capabilityMask([9])).toEqual(Buffer.from([0x02, 0x00]));
    expect(capabilityMask([])).toEqual(Buffer.alloc(0));
  });

  it('carries u64 header values little-endian, as heartbeats need (nanoseconds since the epoch)', () => {
    const ns = BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n;
    const m = message(ChannelType.Heartbeat, [[Header.Heartbeat, u64(ns)]]);
    expect(m.headers.get(Header.Heartbeat)).toHaveLength(8);
    expect(getU64(m.headers, Header.Heartbeat)).toBe(ns);
    expect(getU64(new Map([[Header.Heartbeat, Buffer.alloc(4)]]), Header.Heartbeat)).toBeUndefined();
  });

  it('takes a hello up to OpenZiti’s bounds and refuses a larger one from its prefix alone', () => {
    const frames: Buffer[] = [];
    const decoder = new FrameDecoder(HELLO_LIMITS, (f) => frames.push(f));
    const hello = encode({ ...message(ChannelType.Hello, [[Header.HelloVersion, str('v|r|d|o|a')]], 'x'.repeat(HELLO_MAX_PART)), sequence: -1 });
    decoder.push(hello);
    expect(frames).toHaveLength(1);
    const tooBig = Buffer.alloc(PREFIX_BYTES);
    tooBig.writeUInt32LE(0x0c090603, 0);
    tooBig.writeUInt32LE(HELLO_MAX_PART + 1, 12);
    expect(() => new FrameDecoder(HELLO_LIMITS, () => undefined).push(tooBig)).toThrow(FrameError);
    const bodyTooBig = Buffer.from(tooBig);
    bodyTooBig.writeUInt32LE(0, 12);
    bodyTooBig.writeUInt32LE(2 * HELLO_MAX_PART + 1, 16);
    expect(() => new FrameDecoder(HELLO_LIMITS, () => undefined).push(bodyTooBig)).toThrow(/hello message too big/);
  });

  it('listens on tls:127.0.0.1:6262 by default and advertises the listener unless told otherwise', () => {
    const defaults = configSchema.parse({}).ctrl;
    expect(defaults).toMatchObject({ enabled: true, heartbeat_interval: '10s', unresponsive_timeout: '30s' });
    expect(ctrlAddresses(defaults)).toEqual({ listen: { host: '127.0.0.1', port: 6262, isDefault: true }, advertise: { host: '127.0.0.1' } });
    const wildcard = configSchema.parse({ ctrl: { listener: 'tls:0.0.0.0:7000', advertise: 'tls:ctrl.example.com' } }).ctrl;
    expect(ctrlAddresses(wildcard)).toEqual({
      listen: { host: '0.0.0.0', port: 7000, isDefault: false },
      advertise: { host: 'ctrl.example.com', port: undefined },
    });
    expect(ctrlAddresses(configSchema.parse({ ctrl: { listener: 'tls:0.0.0.0:7000' } }).ctrl).advertise).toEqual({ host: '127.0.0.1' });
    expect(tlsAddress('::1', 6262)).toBe('tls:[::1]:6262');
    expect(configSchema.safeParse({ ctrl: { advertise: 'ctrl.example.com:6262' } }).success).toBe(false);
    expect(configSchema.safeParse({ ctrl: { listener: 'tls:127.0.0.1:70000' } }).success).toBe(false);
  });
});
