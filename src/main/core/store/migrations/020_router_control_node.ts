import type { MigrationTarget } from '../db';

/**
 * The nodes whose control channels a stock router is connected to (a v1.x router connects to every controller its
 * enrollment named): it is online while any is, so a node that stops, dies or restarts takes only its own connections
 * with it (the others mark a silent node's connections gone, core/ops/controllerNodes.ts).
 */
export function up(db: MigrationTarget): void {
  db.exec(`
CREATE TABLE edge_router_nodes (
  router_id TEXT NOT NULL REFERENCES edge_routers(id) ON DELETE CASCADE,
  node_id TEXT NOT NULL,
  connected_at TEXT NOT NULL,
  PRIMARY KEY (router_id, node_id)
);
CREATE INDEX edge_router_nodes_node ON edge_router_nodes(node_id);`);
}
