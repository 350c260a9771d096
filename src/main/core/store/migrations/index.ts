import type Database from 'better-sqlite3';
import * as m001 from './001_foundation';

export interface Migration {
  version: number;
  name: string;
  up(db: Database.Database): void;
}

/** Numbered, append-only. Each runs once, in its own transaction. */
export const migrations: Migration[] = [{ version: 1, name: 'foundation', up: m001.up }];
