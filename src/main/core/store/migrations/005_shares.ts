import type { MigrationTarget } from '../db';

/**
 * Public shares: the frontend looks a share up by the token in its Host name on every request, so
 * svc.proxy.v1 configs are indexed by `data.token`. Not UNIQUE: databases from before this migration may
 * hold duplicates; uniqueness is enforced when a share config is written (core/shares/config.ts).
 */
export function up(db: MigrationTarget): void {
  db.exec(`
CREATE INDEX configs_share_token ON configs(${db.sql.jsonExtract('data', '$.token')}) WHERE config_type_id = 'svc-proxy-v1';
`);
}
