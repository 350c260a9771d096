import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ResourceForm, type FieldSpec, type Values } from '../components/ResourceForm';
import { ConfirmButton, useInvalidateAll } from '../components/ResourcePage';
import { ErrorBox, Panel, Spinner } from '../components/Status';
import type { Entity } from '../lib/types';
import { Link } from '../router';
import { useTRPC } from '../trpc';

/**
 * The form edits the first pair of the REST body (`[{serviceId, configId}]`): its field names are the paths the
 * core's errors name (`0.configId`).
 */
const fields: FieldSpec[] = [
  { kind: 'ref', name: '0.serviceId', label: 'Service', resource: 'services', required: true },
  { kind: 'ref', name: '0.configId', label: 'Config (replaces the service’s config of its type)', resource: 'configs', required: true },
];

type Override = { serviceId: string; configId: string; service: { name: string }; config: { name: string } };

/** Per-identity configs that replace a service's config of the same type. */
export function IdentityServiceConfigs({ identity }: { identity: Entity }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const list = useQuery(trpc.serviceConfigOverrides.list.queryOptions({ identityId: identity.id }));
  const associate = useMutation(trpc.serviceConfigOverrides.associate.mutationOptions());
  const remove = useMutation(trpc.serviceConfigOverrides.remove.mutationOptions({ onSuccess: invalidate }));
  const [formKey, setFormKey] = useState(0);
  const overrides = (list.data ?? []) as Override[];
  return (
    <Panel title="Service config overrides">
      {list.isPending && <Spinner />}
      {list.error && <ErrorBox error={list.error} retry={() => list.refetch()} />}
      {remove.error && <ErrorBox error={remove.error} title="Not removed:" />}
      {list.data &&
        (overrides.length ? (
          <div className="table-scroll resource-table">
            <table aria-label="Service config overrides">
              <thead>
                <tr>
                  <th scope="col">Service</th>
                  <th scope="col">Config</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {overrides.map((o) => (
                  <tr key={`${o.serviceId}/${o.configId}`}>
                    <td data-label="Service">
                      <Link to={`/services/${o.serviceId}`}>{o.service.name}</Link>
                    </td>
                    <td data-label="Config">
                      <Link to={`/configs/${o.configId}`}>{o.config.name}</Link>
                    </td>
                    <td className="row-actions">
                      <ConfirmButton
                        label="Remove"
                        confirmLabel={`Remove override ${o.config.name} for ${o.service.name}`}
                        busy={remove.isPending}
                        onConfirm={() => remove.mutate({ identityId: identity.id, pairs: [{ serviceId: o.serviceId, configId: o.configId }] })}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p className="hint">No overrides: the identity gets each service’s own configs.</p>
        ))}
      <ResourceForm
        key={formKey}
        label="Add a service config override"
        mode="create"
        fields={fields}
        initial={{}}
        submitLabel="Add override"
        toBody={(v: Values) => [v['0'] ?? {}]}
        onSubmit={async (pairs) => {
          await associate.mutateAsync({ identityId: identity.id, pairs });
          await invalidate();
          setFormKey((k) => k + 1);
        }}
      />
    </Panel>
  );
}
