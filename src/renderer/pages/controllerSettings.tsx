import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { RefLink } from '../components/RefLink';
import { RefSelect } from '../components/inputs';
import { nameColumn, type ResourcePageSpec } from '../components/ResourcePage';
import type { FieldSpec, Values } from '../components/ResourceForm';
import { ErrorBox, Panel, Spinner } from '../components/Status';
import type { Entity } from '../lib/types';
import { Link } from '../router';
import { useTRPC } from '../trpc';

const GLOBAL = 'global';
type Oidc = { redirectUris?: string[] | null; postLogoutUris?: string[] | null };
const LISTS = [
  { key: 'redirectUris', label: 'OIDC redirect URIs', override: 'overrideRedirectUris' },
  { key: 'postLogoutUris', label: 'OIDC post-logout URIs', override: 'overridePostLogoutUris' },
] as const;

/** The global settings hold values; a controller's own settings override a list or inherit it (null). */
const shown = (override: string) => (v: Values) => !!v.isGlobal || !!v[override];

const fields: FieldSpec[] = [
  { kind: 'ref', name: 'controllerId', label: 'Controller', resource: 'controllers' },
  ...LISTS.flatMap(({ key, label, override }): FieldSpec[] => [
    { kind: 'checkbox', name: override, label: `Override the global ${label.replace('OIDC ', '')}`, when: (v) => !v.isGlobal },
    { kind: 'list', name: `oidc.${key}`, label, placeholder: 'https://app.example.com/callback, then Enter', when: shown(override) },
  ]),
  { kind: 'tags', name: 'tags', label: 'Tags' },
];

function settingsBody(v: Values) {
  const oidc = (v.oidc ?? {}) as Oidc;
  const lists = Object.fromEntries(LISTS.map(({ key, override }) => [key, v.isGlobal || v[override] ? (oidc[key] ?? []) : null]));
  return { ...(v.controllerId ? { controllerId: v.controllerId } : {}), oidc: lists, tags: v.tags ?? {} };
}

function toEditValues(e: Entity): Values {
  const oidc = (e.oidc ?? {}) as Oidc;
  const isGlobal = e.id === GLOBAL;
  return {
    isGlobal,
    oidc: Object.fromEntries(LISTS.map(({ key }) => [key, oidc[key] ?? []])),
    ...Object.fromEntries(LISTS.map(({ key, override }) => [override, isGlobal || Array.isArray(oidc[key])])),
    tags: e.tags,
  };
}

function UriList({ uris, inherited }: { uris: string[]; inherited: boolean }) {
  return (
    <>
      {uris.length ? (
        <ul className="plain">
          {uris.map((u) => (
            <li key={u}>
              <code>{u}</code>
            </li>
          ))}
        </ul>
      ) : (
        <span className="muted">none</span>
      )}
      <span className="hint">{inherited ? 'from the global settings' : 'set here'}</span>
    </>
  );
}

/** What a controller actually uses: the global settings overridden by its own. */
export function EffectiveSettings({ id }: { id: string }) {
  const trpc = useTRPC();
  const eff = useQuery(trpc.controllerSettings.effective.queryOptions({ id }));
  if (eff.isPending) return <Spinner />;
  if (eff.error) return <ErrorBox error={eff.error} retry={() => eff.refetch()} />;
  const instance = eff.data.instance.oidc ?? {};
  return (
    <dl className="properties" aria-label="Effective settings">
      {LISTS.map(({ key, label }) => (
        <div key={key} className="property">
          <dt>{label}</dt>
          <dd>
            <UriList uris={eff.data.effective.oidc[key]} inherited={id !== GLOBAL && !Array.isArray(instance[key])} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** The list page's "effective settings of a controller", for controllers with or without their own settings. */
function EffectiveForController() {
  const selectId = useId();
  const [controller, setController] = useState<string | null>(null);
  return (
    <Panel title="Effective settings of a controller">
      <div className="field">
        <label htmlFor={selectId}>Controller</label>
        <RefSelect id={selectId} label="Controller" resource="controllers" value={controller} onChange={setController} />
      </div>
      {controller ? <EffectiveSettings id={controller} /> : <p className="hint">Choose a controller.</p>}
    </Panel>
  );
}

const listOf = (e: Entity, key: keyof Oidc) => {
  const list = ((e.oidc ?? {}) as Oidc)[key];
  return Array.isArray(list) ? list.join(', ') || 'none' : 'inherited';
};

export const controllerSettingsSpec: ResourcePageSpec = {
  resource: 'controller-settings',
  path: 'controller-settings',
  title: 'Controller settings',
  singular: 'controller setting',
  description: 'Global settings, and per-controller settings that override them list by list.',
  columns: [
    {
      field: 'id',
      label: 'Scope',
      render: (e) =>
        e.id === GLOBAL ? <Link to="/controller-settings/global">Global</Link> : <RefLink value={e.controller} page="controller-settings" />,
    },
    { field: 'redirectUris', label: 'Redirect URIs', render: (e) => listOf(e, 'redirectUris') },
    { field: 'postLogoutUris', label: 'Post-logout URIs', render: (e) => listOf(e, 'postLogoutUris') },
    { field: 'updatedAt', label: 'Updated' },
  ],
  fields,
  createInitial: { isGlobal: false, oidc: { redirectUris: [], postLogoutUris: [] } },
  toCreateBody: settingsBody,
  toEditValues,
  toEditBody: ({ controllerId: _c, ...v }) => settingsBody(v),
  properties: [
    { label: 'Controller', render: (e) => (e.id === GLOBAL ? 'all (global settings)' : <RefLink value={e.controller} />) },
    ...LISTS.map(({ key, label }) => ({ label, render: (e: Entity) => listOf(e, key) })),
  ],
  panels: (e) => (
    <Panel title="Effective settings">
      <EffectiveSettings id={e.id} />
    </Panel>
  ),
  listPanels: () => <EffectiveForController />,
};

export const controllersSpec: ResourcePageSpec = {
  resource: 'controllers',
  path: 'controllers',
  title: 'Controllers',
  singular: 'controller',
  description: 'The controllers of this network (Weft is one).',
  columns: [
    nameColumn('controllers'),
    { field: 'isOnline', label: 'Online' },
    { field: 'isPreferredLeader', label: 'Preferred leader' },
    { field: 'fingerprint', label: 'Fingerprint' },
    { field: 'lastJoinedAt', label: 'Last joined' },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  properties: [
    {
      label: 'API addresses',
      render: (e) => (
        <ul className="plain">
          {Object.entries((e.apiAddresses ?? {}) as Record<string, Array<{ url: string; version: string }>>).flatMap(([api, list]) =>
            list.map((a) => (
              <li key={`${api}${a.url}`}>
                {`${api} ${a.version}: `}
                <code>{a.url}</code>
              </li>
            )),
          )}
        </ul>
      ),
    },
  ],
  panels: (e) => (
    <Panel title="Effective settings" actions={<Link to="/controller-settings">Controller settings</Link>}>
      <EffectiveSettings id={e.id} />
    </Panel>
  ),
};
