import type { ResourcePageSpec } from '../components/ResourcePage';
import { formatDate } from '../lib/format';
import type { Entity } from '../lib/types';
import { Link } from '../router';

const text = (v: unknown) => (typeof v === 'string' && v ? v : '');

/** Who acted: the identity (linked) or, for a login nobody passed, what was tried. */
function Who({ e }: { e: Entity }) {
  if (e.identityId) return <Link to={`/identities/${encodeURIComponent(String(e.identityId))}`}>{text(e.identityName) || String(e.identityId)}</Link>;
  if (e.principal) return <span title="tried, not authenticated">{String(e.principal)}</span>;
  return <span className="muted">—</span>;
}

function Outcome({ e }: { e: Entity }) {
  return e.outcome === 'success' ? (
    <>success</>
  ) : (
    <span className="outcome-failure">{`failure${e.errorCode ? ` (${String(e.errorCode)})` : ''}`}</span>
  );
}

/** The audit log (read-only): Management API writes, logins and MFA, and the console's writes; newest first. */
export const auditLogSpec: ResourcePageSpec = {
  resource: 'audit-log',
  path: 'audit-log',
  title: 'Audit log',
  singular: 'audit log entry',
  description: (
    <>
      Every write through the Management API or this console and every login and MFA code, with its outcome. Filter with ZitiQL, e.g.{' '}
      <code>action = "login" and outcome = "failure"</code> or <code>entityType = "identities"</code>. Old entries are pruned (
      <code>audit.retention</code>).
    </>
  ),
  columns: [
    { field: 'createdAt', label: 'Time', render: (e) => <Link to={`/audit-log/${encodeURIComponent(e.id)}`}>{formatDate(e.createdAt)}</Link> },
    { field: 'action', label: 'Action' },
    { field: 'entityType', label: 'Entity type' },
    { field: 'entityId', label: 'Entity ID' },
    { field: 'identityName', label: 'Who', render: (e) => <Who e={e} /> },
    { field: 'source', label: 'Source' },
    { field: 'sourceAddress', label: 'Address' },
    { field: 'outcome', label: 'Outcome', render: (e) => <Outcome e={e} /> },
  ],
  defaultSort: { field: 'createdAt', dir: 'desc' },
};
