import { describe, expect, it } from 'vitest';
import {
  checkPasses,
  emptyPostureData,
  failureOf,
  MFA_PROMPT_GRACE_SECONDS,
  timeoutRemaining,
  timeoutSeconds,
  POSTURE_CHECK,
  type EvaluationInput,
} from '../../src/main/core/policy/postureEvaluation';
import { decodeRow } from '../../src/main/core/store/rows';
import { parseVersion, satisfies } from '../../src/main/core/policy/semverRange';

const check = (type: string, details: object, id = 'pc1') =>
  decodeRow(POSTURE_CHECK, {
    id,
    name: `check-${type}`,
    type_id: type,
    version: 1,
    details: JSON.stringify(details),
    created_at: '',
    updated_at: '',
    tags: '{}',
  });
const at = (iso: string) => new Date(iso);
const input = (over: Partial<EvaluationInput['data']> = {}, mfa: string | null = null, now = '2030-01-01T00:10:00.000Z'): EvaluationInput => ({
  data: { ...emptyPostureData(), ...over },
  mfa: { apiSessionId: 'as1', passedAt: mfa },
  now: at(now),
});
const stamp = { postureCheckId: 'x', lastUpdatedAt: '2030-01-01T00:00:00.000Z' };

describe('semver ranges (OS checks)', () => {
  it('comparators, AND by space, OR by ||, short versions', () => {
    expect(parseVersion('10.0')).toEqual([10, 0, 0]);
    expect(parseVersion('v5.10.1-rc1')).toEqual([5, 10, 1]);
    expect(parseVersion('banana')).toBeUndefined();
    expect(satisfies('5.10.2', '>=5.10.0 <6.0.0')).toBe(true);
    expect(satisfies('6.0.0', '>=5.10.0 <6.0.0')).toBe(false);
    expect(satisfies('4.0.0', '<1.0.0 || >=4.0.0')).toBe(true);
    expect(satisfies('1.2.3', '1.2.3')).toBe(true);
    expect(satisfies('1.2.3', '=1.2.3')).toBe(true);
    expect(satisfies('1.2.3', '!1.2.3')).toBe(false);
    expect(satisfies('1.2.4', '!=1.2.3')).toBe(true);
    expect(satisfies('1.2.4', '>1.2.3')).toBe(true);
    expect(satisfies('1.2.3', '<=1.2.3')).toBe(true);
    expect(satisfies('x', '>=1.0.0')).toBe(false);
    expect(satisfies('1.0.0', '>=nonsense')).toBe(false);
    expect(satisfies('1.0.0', '')).toBe(false);
  });
});

describe('posture checks', () => {
  it('DOMAIN: case-insensitive match of the reported domain', () => {
    const c = check('DOMAIN', { domains: ['Corp.Example'] });
    expect(checkPasses(c, input())).toBe(false);
    expect(checkPasses(c, input({ domain: { ...stamp, name: 'corp.example' } }))).toBe(true);
    expect(failureOf(c, input({ domain: { ...stamp, name: 'home' } }))).toMatchObject({
      actualValue: 'home',
      expectedValue: ['Corp.Example'],
      postureCheckType: 'DOMAIN',
    });
  });

  it('MAC: any reported address, separators and case ignored', () => {
    const c = check('MAC', { macAddresses: ['AA:BB:CC:DD:EE:FF'] });
    expect(checkPasses(c, input({ mac: { ...stamp, addresses: ['00:00:00:00:00:00'] } }))).toBe(false);
    expect(checkPasses(c, input({ mac: { ...stamp, addresses: ['00-00', 'aabb.ccdd.eeff'] } }))).toBe(true);
  });

  it('OS: type case-insensitive, any version range, no ranges means any version; the last declaration of an OS wins', () => {
    const c = check('OS', {
      operatingSystems: [
        { type: 'Windows', versions: ['>=10.0.19041'] },
        { type: 'Linux', versions: [] },
      ],
    });
    const os = (type: string, version: string) => input({ os: { ...stamp, type, version, build: '' } });
    expect(checkPasses(c, os('windows', '10.0.19045'))).toBe(true);
    expect(checkPasses(c, os('Windows', '10.0.17763'))).toBe(false);
    expect(checkPasses(c, os('Linux', 'whatever'))).toBe(true);
    expect(checkPasses(c, os('macOS', '14.0.0'))).toBe(false);
    const twice = check('OS', {
      operatingSystems: [
        { type: 'Linux', versions: [] },
        { type: 'Linux', versions: ['>=6.0.0'] },
      ],
    });
    expect(checkPasses(twice, os('Linux', '5.0.0'))).toBe(false);
  });

  it('PROCESS: running, signer and hash', () => {
    const c = check('PROCESS', { process: { osType: 'Linux', path: '/bin/av', hashes: ['AB'], signerFingerprint: 'FF' } });
    const proc = (p: object) =>
      input({
        processes: [
          {
            postureCheckId: 'pc1',
            path: '/bin/av',
            isRunning: true,
            hash: 'ab',
            signerFingerprints: ['ff'],
            lastUpdatedAt: stamp.lastUpdatedAt,
            ...p,
          },
        ],
      });
    expect(checkPasses(c, proc({}))).toBe(true);
    expect(checkPasses(c, proc({ isRunning: false }))).toBe(false);
    expect(checkPasses(c, proc({ hash: 'cd' }))).toBe(false);
    expect(checkPasses(c, proc({ signerFingerprints: ['ee'] }))).toBe(false);
    expect(checkPasses(c, proc({ postureCheckId: 'other' }))).toBe(false);
  });

  it('PROCESS_MULTI: AllOf needs every process, AnyOf one', () => {
    const procs = [
      { osType: 'Linux', path: '/a' },
      { osType: 'Linux', path: '/b', hashes: ['01'] },
    ];
    const data = (b: object) =>
      input({
        processes: [
          { postureCheckId: 'pc1', path: '/a', isRunning: true, hash: '', signerFingerprints: [], lastUpdatedAt: '' },
          { postureCheckId: 'pc1', path: '/b', isRunning: true, hash: '02', signerFingerprints: [], lastUpdatedAt: '', ...b },
        ],
      });
    expect(checkPasses(check('PROCESS_MULTI', { semantic: 'AllOf', processes: procs }), data({}))).toBe(false);
    expect(checkPasses(check('PROCESS_MULTI', { semantic: 'AllOf', processes: procs }), data({ hash: '01' }))).toBe(true);
    expect(checkPasses(check('PROCESS_MULTI', { semantic: 'AnyOf', processes: procs }), data({}))).toBe(true);
  });

  it('MFA: passed, within its timeout, re-prompted after wake/unlock once the grace period is over', () => {
    const c = check('MFA', { timeoutSeconds: 600, promptOnWake: true, promptOnUnlock: false });
    expect(timeoutSeconds(c)).toBe(600);
    expect(timeoutSeconds(check('MFA', { timeoutSeconds: -1 }))).toBe(-1);
    expect(timeoutSeconds(check('DOMAIN', { domains: ['x'] }))).toBe(-1);
    expect(checkPasses(c, input({}, null))).toBe(false);
    expect(timeoutRemaining(c, input({}, null))).toBe(0);
    const passed = '2030-01-01T00:05:00.000Z';
    expect(checkPasses(c, input({}, passed))).toBe(true);
    expect(timeoutRemaining(c, input({}, passed))).toBe(300);
    expect(checkPasses(c, input({}, passed, '2030-01-01T00:15:01.000Z'))).toBe(false);
    // woken after MFA: still passing during the grace period, failing after
    const woken = (now: string) => input({ sessions: { as1: { endpointState: { wokenAt: '2030-01-01T00:09:00.000Z' } } } }, passed, now);
    expect(checkPasses(c, woken('2030-01-01T00:10:00.000Z'))).toBe(true);
    expect(timeoutRemaining(c, woken('2030-01-01T00:10:00.000Z'))).toBe(MFA_PROMPT_GRACE_SECONDS - 60);
    expect(checkPasses(c, woken('2030-01-01T00:14:01.000Z'))).toBe(false);
    expect(failureOf(c, woken('2030-01-01T00:14:01.000Z'))).toMatchObject({
      actualValue: { passedMfa: true, passedOnWake: false, timedOut: false },
      expectedValue: { passedOnWake: true },
    });
    // an unlock does not matter to a check that does not prompt on unlock
    const unlocked = input({ sessions: { as1: { endpointState: { unlockedAt: '2030-01-01T00:06:00.000Z' } } } }, passed, '2030-01-01T00:14:00.000Z');
    expect(checkPasses(c, unlocked)).toBe(true);
    // no timeout: only the prompts matter
    expect(checkPasses(check('MFA', { timeoutSeconds: -1 }), input({}, passed, '2031-01-01T00:00:00.000Z'))).toBe(true);
  });
});
