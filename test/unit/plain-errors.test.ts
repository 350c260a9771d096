// The console's plain words for OpenZiti's unique-index error: the REST reason is kept word for word, the sentence
// names the type in the singular with its article; every zod problem is listed, the first being the REST cause.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { duplicateValue, singularOf } from '../../src/main/core/errors';
import { parseInput } from '../../src/main/core/validation';

describe('plain errors', () => {
  it('names each type in the singular', () => {
    expect(
      ['identities', 'services', 'edge-routers', 'service-edge-router-policies', 'cas', 'external-jwt-signers', 'posture-checks', 'configs'].map(
        singularOf,
      ),
    ).toEqual(['identity', 'service', 'edge router', 'service edge router policy', 'CA', 'external JWT signer', 'posture check', 'config']);
  });

  it("keeps OpenZiti's reason and says it plainly", () => {
    const e = duplicateValue('identities', 'name', 'eve');
    expect(e.fieldCause).toEqual({ field: 'name', reason: "duplicate value 'eve' in unique index on identities store", value: 'eve' });
    expect(e.forPeople?.plain).toBe('An identity named eve already exists');
    expect(duplicateValue('service-policies', 'name', 'x').forPeople?.plain).toBe('A service policy named x already exists');
    expect(duplicateValue('authenticators', 'username', 'bob').forPeople?.plain).toBe('An authenticator with username bob already exists');
  });

  it('lists every field at fault, the first as the cause', () => {
    const schema = z.object({ name: z.string().min(1), port: z.number(), roles: z.array(z.string()).min(1) });
    try {
      parseInput(schema, { name: '', roles: [] });
      expect.unreachable();
    } catch (e: any) {
      expect(e.fieldCause).toMatchObject({ field: 'name' });
      expect(e.forPeople.causes.map((c: any) => [c.field, c.reason])).toEqual([
        ['name', expect.any(String)],
        ['port', 'is required'],
        ['roles', expect.any(String)],
      ]);
    }
  });
});
