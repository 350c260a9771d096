import type { TestProject } from 'vitest/node';
import { onPostgres, startPostgres, type PostgresServer } from './postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    /** the `postgres` database of the run's PostgreSQL server ('' when the run is on SQLite) */
    postgresAdminUrl: string;
  }
}

let server: PostgresServer | undefined;

/** Global set-up: on the PostgreSQL run, one server for the whole run (each test app gets its own database). */
export async function setup(project: TestProject): Promise<void> {
  if (onPostgres()) server = await startPostgres();
  project.provide('postgresAdminUrl', server?.adminUrl ?? '');
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
