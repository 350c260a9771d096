import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { downloadBase64 } from '../lib/files';
import type { ResourceName, RouterOutputs } from '../lib/types';
import { useTRPC } from '../trpc';
import { ErrorBox, Notice } from './Status';
import '../workflows.css';
import { ConfirmButton } from './ConfirmButton';

/** What a list offers for several selected rows. */
export type BulkAction = 'delete' | 'attributes' | 'state' | 'archive';
export interface BulkConfig {
  actions: BulkAction[];
  /** plural noun for messages, e.g. "identities" */
  noun: string;
}

type Result = RouterOutputs['bulk']['delete'];

function Outcome({ verb, result, noun }: { verb: string; result: Result; noun: string }) {
  const failed = result.outcomes.filter((o) => !o.ok);
  return (
    <div className="bulk-result" role="status">
      <Notice kind={failed.length ? 'warning' : 'success'}>
        {`${verb} ${result.done} of ${result.outcomes.length} ${noun}.`}
        {failed.length > 0 && (
          <>
            {' Not done:'}
            <ul>
              {failed.map((o) => (
                <li key={o.id}>{`${o.name ?? o.id}: ${o.error?.reason ?? o.error?.message ?? 'failed'}`}</li>
              ))}
            </ul>
          </>
        )}
      </Notice>
    </div>
  );
}

/**
 * The bar over a list when rows are selected: delete them, add or remove a role attribute, disable or enable
 * identities, download their enrollment JWTs as one ZIP. Each entity is changed on its own; failures are listed.
 */
export function BulkBar(p: {
  resource: ResourceName;
  config: BulkConfig;
  selected: Map<string, string>;
  onClear(): void;
  onRemoved(ids: string[]): void;
}) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const attrId = useId();
  const [attr, setAttr] = useState('');
  const [last, setLast] = useState<{ verb: string; result: Result }>();
  const [archiveNote, setArchiveNote] = useState<string>();
  const done = async (verb: string, result: Result) => {
    setLast({ verb, result });
    setArchiveNote(undefined);
    await qc.invalidateQueries();
  };
  const del = useMutation(trpc.bulk.delete.mutationOptions());
  const attrs = useMutation(trpc.bulk.roleAttributes.mutationOptions());
  const state = useMutation(trpc.bulk.identityState.mutationOptions());
  const archive = useMutation(trpc.bulk.enrollmentArchive.mutationOptions());
  const ids = [...p.selected.keys()];
  const error = del.error ?? attrs.error ?? state.error ?? archive.error;
  const busy = del.isPending || attrs.isPending || state.isPending || archive.isPending;
  const has = (a: BulkAction) => p.config.actions.includes(a);

  return (
    <>
      <div className="bulk-bar" role="region" aria-label={`Selected ${p.config.noun}`}>
        <span className="bulk-count" aria-live="polite">{`${ids.length} selected`}</span>
        {has('delete') && (
          <ConfirmButton
            label="Delete selected"
            confirmLabel={`Delete ${ids.length} ${p.config.noun}`}
            busy={busy}
            resetOnConfirm
            onConfirm={async () => {
              try {
                const r = await del.mutateAsync({ resource: p.resource, ids });
                p.onRemoved(r.outcomes.filter((o) => o.ok).map((o) => o.id));
                await done('Deleted', r);
              } catch {
                /* shown below */
              }
            }}
          />
        )}
        {has('attributes') && (
          <span className="group" role="group" aria-label="Role attribute">
            <label htmlFor={attrId}>Attribute</label>
            <input
              id={attrId}
              type="text"
              value={attr}
              onChange={(e) => setAttr(e.target.value)}
              placeholder="e.g. staff"
              autoComplete="off"
              spellCheck={false}
            />
            {(['add', 'remove'] as const).map((how) => (
              <button
                key={how}
                type="button"
                className="secondary"
                disabled={busy || !attr.trim()}
                onClick={async () => {
                  try {
                    const change = how === 'add' ? { add: [attr.trim()] } : { remove: [attr.trim()] };
                    const r = await attrs.mutateAsync({ resource: p.resource, ids, ...change });
                    await done(how === 'add' ? `Added #${attr.trim().replace(/^#/, '')} to` : `Removed #${attr.trim().replace(/^#/, '')} from`, r);
                  } catch {
                    /* shown below */
                  }
                }}
              >
                {how === 'add' ? 'Add to selected' : 'Remove from selected'}
              </button>
            ))}
          </span>
        )}
        {has('state') && (
          <span className="group">
            {([true, false] as const).map((disabled) => (
              <button
                key={String(disabled)}
                type="button"
                className={disabled ? 'danger' : 'secondary'}
                disabled={busy}
                onClick={async () => {
                  try {
                    await done(disabled ? 'Disabled' : 'Enabled', await state.mutateAsync({ ids, disabled, durationMinutes: 0 }));
                  } catch {
                    /* shown below */
                  }
                }}
              >
                {disabled ? 'Disable selected' : 'Enable selected'}
              </button>
            ))}
          </span>
        )}
        {has('archive') && (
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={async () => {
              try {
                const r = await archive.mutateAsync({ ids });
                downloadBase64(r.filename, r.base64, 'application/zip');
                setLast(undefined);
                setArchiveNote(
                  `${r.filename}: ${r.files} enrollment JWT${r.files === 1 ? '' : 's'}${r.without.length ? `; without an outstanding enrollment: ${r.without.join(', ')}` : ''}.`,
                );
              } catch {
                /* shown below */
              }
            }}
          >
            Download enrollment JWTs (.zip)
          </button>
        )}
        <button type="button" className="link-button" onClick={p.onClear}>
          Clear selection
        </button>
      </div>
      {error && <ErrorBox error={error} title="Not done:" />}
      {last && <Outcome verb={last.verb} result={last.result} noun={p.config.noun} />}
      {archiveNote && <Notice kind="success">{archiveNote}</Notice>}
    </>
  );
}
