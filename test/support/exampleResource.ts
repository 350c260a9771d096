// The worked example of docs/architecture.md ("Adding a resource type"): what a new type's declaration file
// (src/main/core/entities/<type>.ts) holds. test/integration/resource-type-example.test.ts checks it works as the
// document says, so the document cannot drift from the mechanism.
import { z } from 'zod';
import { nameSchema } from '../../src/main/core/entities/common';
import { defineResource } from '../../src/main/core/entities/define';
import { validationError } from '../../src/main/core/errors';
import { sqlMigration } from '../../src/main/core/store/migrations/index';

/** Sites: where devices of the network are (a Weft extension, read and written by administrators). */
export const sites = defineResource({
  entity: 'sites',
  table: 'sites',
  permission: 'ops',
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    location: { codec: 'string', schema: z.string().max(200), nullable: true, zero: null, filter: true },
    rackUnits: { codec: 'int', schema: z.number().int().min(0).max(100), zero: 0, filter: true },
    isActive: { codec: 'bool', schema: z.boolean(), nullable: true, zero: true, patchNull: 'leave', filter: true },
    contacts: { codec: 'json', schema: z.array(z.email()), nullable: true, zero: [] },
  },
  defaultSort: 't.name ASC',
  migrations: [
    sqlMigration(
      1001,
      'sites',
      `CREATE TABLE sites (
        id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, location TEXT, rack_units INTEGER NOT NULL DEFAULT 0,
        is_active INTEGER NOT NULL DEFAULT 1, contacts TEXT NOT NULL DEFAULT '[]',
        tags TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    ),
  ],
  beforeWrite(_op, input) {
    // input is typed from the fields: input.contacts is string[] | null | undefined here
    if (input.contacts && new Set(input.contacts).size !== input.contacts.length)
      throw validationError('contacts', 'duplicate contact', input.contacts);
  },
});
