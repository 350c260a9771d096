import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmButton, useInvalidateAll } from '../components/ResourcePage';
import { ResourceForm, type FieldSpec, type Values } from '../components/ResourceForm';
import { ResourceTable } from '../components/ResourceTable';
import { ErrorBox, Notice, Page, Panel, Spinner } from '../components/Status';
import type { Entity } from '../lib/types';
import { useTRPC } from '../trpc';

type ShareData = {
  token?: string;
  backendMode?: string;
  target?: string;
  oauth?: { provider?: string; emailPatterns?: string[]; checkInterval?: string };
};
const dataOf = (e: Entity) => (e.data ?? {}) as ShareData;
const randomToken = () => Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');

function RemoveShare({ share }: { share: Entity }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const remove = useMutation(trpc.shares.remove.mutationOptions({ onSuccess: invalidate }));
  return (
    <>
      {remove.error && <ErrorBox error={remove.error} />}
      <ConfirmButton
        label="Remove"
        confirmLabel={`Remove share ${dataOf(share).token}`}
        busy={remove.isPending}
        onConfirm={() => remove.mutate({ configId: share.id })}
      />
    </>
  );
}

/** Public shares: a local URL or directory published on the frontend, optionally behind an OAuth login. */
export function SharesPage() {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const options = useQuery(trpc.shares.options.queryOptions());
  const create = useMutation(trpc.shares.create.mutationOptions());
  const [created, setCreated] = useState<string>();
  const [formKey, setFormKey] = useState(0);
  const shareUrl = (token: string | undefined) => (options.data?.shareUrl && token ? options.data.shareUrl.replace('{token}', token) : undefined);
  const providers = options.data?.providers ?? [];
  const fields: FieldSpec[] = [
    { kind: 'text', name: 'data.token', label: 'Token (the first label of the share’s host name)', required: true },
    {
      kind: 'radio',
      name: 'data.backendMode',
      label: 'Backend',
      options: [
        { value: 'proxy', label: 'Proxy to a URL' },
        { value: 'web', label: 'Serve a directory' },
      ],
    },
    {
      kind: 'text',
      name: 'data.target',
      label: 'Target (http(s) URL, or an absolute directory for web)',
      required: true,
      placeholder: 'http://localhost:3000',
    },
    { kind: 'checkbox', name: 'useOAuth', label: 'Require an OAuth login' },
    {
      kind: 'select',
      name: 'data.oauth.provider',
      label: 'OAuth provider',
      required: true,
      when: (v) => !!v.useOAuth,
      options: providers.map((p) => ({ value: p, label: p })),
    },
    {
      kind: 'list',
      name: 'data.oauth.emailPatterns',
      label: 'Allowed email patterns (globs; none = any verified email)',
      placeholder: '*@example.com, then Enter',
      when: (v) => !!v.useOAuth,
    },
    { kind: 'text', name: 'data.oauth.checkInterval', label: 'Re-check the login every', placeholder: '3h', when: (v) => !!v.useOAuth },
  ];
  const toBody = (v: Values) => {
    const { useOAuth, data } = v as { useOAuth?: boolean; data?: ShareData };
    const d: ShareData = { ...(data ?? {}) };
    if (!useOAuth) delete d.oauth;
    return { data: d };
  };
  return (
    <Page title="Public shares" description="Each share publishes a local URL or directory at its own host name on the public frontend.">
      {options.isPending && <Spinner />}
      {options.error && <ErrorBox error={options.error} retry={() => options.refetch()} />}
      {options.data && !options.data.shareUrl && (
        <Notice kind="warning">
          This Weft has no frontend configured: shares can be created but nothing serves them until a "frontend" section is added.
        </Notice>
      )}
      {options.data?.shareUrl && (
        <p>
          Shares are served at <code>{options.data.shareUrl}</code>
          {options.data.providers ? `; OAuth providers: ${options.data.providers.join(', ')}.` : '; the frontend has no OAuth providers.'}
        </p>
      )}
      <Panel title="Shares">
        <ResourceTable
          resource="configs"
          label="Shares"
          fixedFilter='configTypeId = "svc-proxy-v1"'
          defaultSort={{ field: 'createdAt', dir: 'desc' }}
          columns={[
            { field: 'token', label: 'Token', render: (e) => dataOf(e).token },
            {
              field: 'url',
              label: 'Public URL',
              render: (e) =>
                shareUrl(dataOf(e).token) ? (
                  <a href={shareUrl(dataOf(e).token)} target="_blank" rel="noreferrer noopener">
                    {shareUrl(dataOf(e).token)}
                  </a>
                ) : (
                  '—'
                ),
            },
            { field: 'backendMode', label: 'Backend', render: (e) => `${dataOf(e).backendMode}: ${dataOf(e).target}` },
            {
              field: 'oauth',
              label: 'Login',
              render: (e) => {
                const o = dataOf(e).oauth;
                return o ? `${o.provider}${o.emailPatterns?.length ? ` (${o.emailPatterns.join(', ')})` : ''}` : 'none (public)';
              },
            },
            { field: 'createdAt', label: 'Created' },
          ]}
          rowActions={(e) => <RemoveShare share={e} />}
        />
      </Panel>
      <Panel title="New share">
        {created && <Notice kind="success">{`Share ${created} created${shareUrl(created) ? `: ${shareUrl(created)}` : ''}.`}</Notice>}
        <ResourceForm
          key={formKey}
          label="New share"
          mode="create"
          fields={fields}
          initial={{ data: { token: randomToken(), backendMode: 'proxy' }, useOAuth: false }}
          toBody={toBody}
          submitLabel="Create share"
          onSubmit={async (body) => {
            await create.mutateAsync(body as { data: Record<string, unknown> });
            setCreated((body as { data: ShareData }).data.token);
            setFormKey((k) => k + 1);
            await invalidate();
          }}
        />
      </Panel>
    </Page>
  );
}
