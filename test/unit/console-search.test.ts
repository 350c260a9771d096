// The console's filter box: what it sends for what a user types.
import { describe, expect, it } from 'vitest';
import { toFilter } from '../../src/renderer/lib/search';

const IDENTITY_FIELDS = ['id', 'name', 'roleAttributes', 'type', 'tags'];

describe('console filter box', () => {
  it('#attr finds rows holding the role attribute; several must all be held', () => {
    expect(toFilter('#dept-2', IDENTITY_FIELDS)).toBe('anyOf(roleAttributes) = "dept-2"');
    expect(toFilter('  #staff   #eu ', IDENTITY_FIELDS)).toBe('anyOf(roleAttributes) = "staff" and anyOf(roleAttributes) = "eu"');
  });

  it('plain words search names, and role attributes where the type has them', () => {
    expect(toFilter('dept-2', IDENTITY_FIELDS)).toBe('(name icontains "dept-2" or anyOf(roleAttributes) = "dept-2")');
    expect(toFilter('web', ['id', 'name'])).toBe('name icontains "web"');
    expect(toFilter('#web', ['id', 'name'])).toBe('name icontains "#web"');
  });

  it('leaves ZitiQL alone, and quotes what it builds', () => {
    expect(toFilter('name contains "web" and tags.env = "prod"', IDENTITY_FIELDS)).toBe('name contains "web" and tags.env = "prod"');
    expect(toFilter('#a #b"', IDENTITY_FIELDS)).toBe('#a #b"');
    expect(toFilter('back\\slash', IDENTITY_FIELDS)).toBe('(name icontains "back\\\\slash" or anyOf(roleAttributes) = "back\\\\slash")');
    expect(toFilter('   ', IDENTITY_FIELDS)).toBeUndefined();
  });
});
