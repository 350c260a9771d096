import type { Migration } from '../db';
import * as m001 from './001_foundation';
import * as m002 from './002_enrollment';
import * as m003 from './003_policy';
import * as m004 from './004_security';
import * as m005 from './005_shares';
import * as m006 from './006_revocations';
import * as m007 from './007_hardening';
import * as m008 from './008_text_search';
import * as m009 from './009_audit_order';
import * as m010 from './010_shared_files';
import * as m011 from './011_used_once';
import * as m012 from './012_controller_router';
import * as m013 from './013_oidc';
import * as m014 from './014_outbox';
import * as m015 from './015_events';
import * as m016 from './016_terminator_hosts';
import * as m018 from './018_text_search_postgres';
import * as m019 from './019_identity_last_seen';
import * as m020 from './020_router_control_node';
import * as m021 from './021_terminator_sessions';

export type { Migration, MigrationTarget } from '../db';

/** A migration of plain SQL statements. */
export const sqlMigration = (version: number, name: string, sql: string): Migration => ({ version, name, up: (db) => db.exec(sql) });

/**
 * Numbered, append-only. Each runs once, in its own transaction. A resource type may declare the migrations of its
 * own tables with it (ResourceDeclaration.migrations); core/registry.ts adds them to these (one version sequence).
 */
export const migrations: Migration[] = [
  { version: 1, name: 'foundation', up: m001.up },
  { version: 2, name: 'enrollment', up: m002.up },
  { version: 3, name: 'policy', up: m003.up },
  { version: 4, name: 'security', up: m004.up },
  { version: 5, name: 'shares', up: m005.up },
  { version: 6, name: 'revocations', up: m006.up },
  { version: 7, name: 'hardening', up: m007.up },
  { version: 8, name: 'text search', up: m008.up },
  { version: 9, name: 'audit order', up: m009.up },
  { version: 10, name: 'shared files', up: m010.up },
  { version: 11, name: 'used once', up: m011.up },
  { version: 12, name: 'controller router', up: m012.up },
  { version: 13, name: 'oidc', up: m013.up },
  { version: 14, name: 'outbox', up: m014.up },
  { version: 15, name: 'events', up: m015.up },
  { version: 16, name: 'terminator hosts', up: m016.up },
  { version: 18, name: 'text search on postgres', up: m018.up },
  { version: 19, name: 'identity last seen', up: m019.up },
  { version: 20, name: 'router control node', up: m020.up },
  { version: 21, name: 'terminator sessions', up: m021.up },
];
