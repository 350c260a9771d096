import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ResourceForm, type FieldSpec, type Values } from '../components/ResourceForm';
import { useInvalidateAll } from '../components/ResourcePage';
import { ErrorBox, Notice, Panel, Spinner } from '../components/Status';
import { formatDate } from '../lib/format';
import type { Entity } from '../lib/types';
import { useTRPC } from '../trpc';

/** Field names are the REST trace spec's, so the core's field errors (e.g. `duration`) land on them. */
const fields: FieldSpec[] = [
  { kind: 'text', name: 'duration', label: 'Duration', placeholder: '10m', help: 'How long to trace, e.g. 30m or 2h (at most 168h; default 10m).' },
  { kind: 'list', name: 'channels', label: 'Channels (none = all)', placeholder: 'a channel name, then Enter' },
  { kind: 'text', name: 'traceId', label: 'Trace ID (generated when empty)' },
];

/** Data flow tracing of an identity: its state, enabling for a while, disabling. */
export function IdentityTracing({ identity }: { identity: Entity }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const state = useQuery(trpc.identityTracing.get.queryOptions({ identityId: identity.id }));
  const update = useMutation(trpc.identityTracing.update.mutationOptions());
  const [formKey, setFormKey] = useState(0);
  const disable = useMutation(trpc.identityTracing.update.mutationOptions({ onSuccess: invalidate }));
  return (
    <Panel title="Data flow tracing">
      {state.isPending && <Spinner />}
      {state.error && <ErrorBox error={state.error} retry={() => state.refetch()} />}
      {state.data &&
        (state.data.enabled ? (
          <div className="button-row">
            <Notice kind="success">
              {`Tracing is on until ${formatDate(state.data.until)} (trace ID ${state.data.traceId}; channels: ${state.data.channels.join(', ') || 'all'}).`}
            </Notice>
            <button
              type="button"
              className="danger"
              disabled={disable.isPending}
              onClick={() => disable.mutate({ identityId: identity.id, body: { enabled: false } })}
            >
              Stop tracing
            </button>
          </div>
        ) : (
          <p role="status">Tracing is off.</p>
        ))}
      {disable.error && <ErrorBox error={disable.error} />}
      <ResourceForm
        key={formKey}
        label="Start tracing"
        mode="create"
        fields={fields}
        initial={{ channels: [] }}
        submitLabel={state.data?.enabled ? 'Trace again with these settings' : 'Start tracing'}
        toBody={(v: Values) => ({ ...v, enabled: true })}
        onSubmit={async (body) => {
          await update.mutateAsync({ identityId: identity.id, body });
          await invalidate();
          setFormKey((k) => k + 1);
        }}
      />
    </Panel>
  );
}
