import { useMutation } from '@tanstack/react-query';
import { relative } from '../lib/format';
import { useTRPC } from '../trpc';
import { useInvalidateAll } from './ResourcePage';
import { ErrorBox } from './Status';

/** Whether an enrollment's expiry (RFC 3339) has passed. */
export const enrollmentExpired = (expiresAt: unknown): boolean => typeof expiresAt === 'string' && Date.parse(expiresAt) <= Date.now();

/**
 * An expired enrollment, re-issued in place with one click (`POST /enrollments/{id}/refresh`): the same identity and
 * enrollment get a new token, JWT and a three-hour expiry. Shows nothing while the enrollment is still valid.
 */
export function ReissueEnrollment({ enrollmentId, expiresAt }: { enrollmentId: string; expiresAt: unknown }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const refresh = useMutation(trpc.identities.refreshEnrollment.mutationOptions({ onSuccess: invalidate }));
  if (!enrollmentExpired(expiresAt)) return null;
  return (
    <div className="notice notice-warning">
      <p>
        <strong>{`This enrollment token expired ${relative(expiresAt)}.`}</strong> Devices can no longer enroll with it. Re-issue it: the same
        identity gets a new token, valid for three hours.
      </p>
      <button type="button" disabled={refresh.isPending} onClick={() => refresh.mutate({ id: enrollmentId, minutes: 180 })}>
        {refresh.isPending ? 'Re-issuing…' : 'Re-issue the token'}
      </button>
      {refresh.error && <ErrorBox error={refresh.error} title="Not re-issued:" />}
    </div>
  );
}
