import { useMutation } from '@tanstack/react-query';
import { errorInfo } from '../lib/errors';
import type { ResourceName } from '../lib/types';
import { useTRPC } from '../trpc';
import { ConfirmButton, useInvalidateAll } from './ResourcePage';

/** A row action: deletes one entity after a confirming second press; a refusal shows beside the button. */
export function DeleteEntityButton(p: { resource: ResourceName; id: string; label?: string; confirmLabel: string }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const remove = useMutation(trpc.resources.delete.mutationOptions({ onSuccess: invalidate }));
  return (
    <>
      <ConfirmButton
        label={p.label ?? 'Delete'}
        confirmLabel={p.confirmLabel}
        busy={remove.isPending}
        onConfirm={() => remove.mutate({ resource: p.resource, id: p.id })}
      />
      {remove.error && (
        <span className="field-error" role="alert">
          {errorInfo(remove.error).message}
        </span>
      )}
    </>
  );
}
