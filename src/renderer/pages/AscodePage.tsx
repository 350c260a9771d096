import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { ErrorBox, Notice, Page, Panel } from '../components/Status';
import { readText } from '../lib/files';
import { downloadBlob } from '../lib/format';
import type { RouterOutputs } from '../lib/types';
import { useTRPC } from '../trpc';
import '../workflows.css';

type Result = RouterOutputs['ascode']['import'];

/** The network as code: download it (the format of `ziti ops export`), import a file after a dry-run preview. */
export function AscodePage() {
  const trpc = useTRPC();
  const fileId = useId();
  const [text, setText] = useState('');
  const [fileName, setFileName] = useState('');
  const [preview, setPreview] = useState<Result | undefined>();
  const qc = useQueryClient();
  // a read: fetched on the click, never cached (each download is the network as it is then)
  const exporter = useMutation({
    mutationFn: async (format: 'json' | 'yaml') => {
      const r = await qc.fetchQuery({ ...trpc.ascode.export.queryOptions({ format }), staleTime: 0, gcTime: 0 });
      downloadBlob(`network.${r.format}`, new Blob([r.text], { type: r.format === 'yaml' ? 'application/yaml' : 'application/json' }));
    },
  });
  const plan = useMutation(trpc.ascode.import.mutationOptions({ onSuccess: (r) => setPreview(r) }));
  const apply = useMutation(trpc.ascode.import.mutationOptions());
  // what the import did once it ran, else what the dry run says it would do
  const shown = apply.data ?? preview;
  const changes = shown?.plan.filter((p) => p.action !== 'unchanged') ?? [];
  return (
    <Page
      title="Export and import"
      description="The network as code, in the format of ziti ops export: download it, or import a file (entries matched by name, all or nothing)."
    >
      <Panel title="Download the network">
        <div className="button-row">
          <button type="button" disabled={exporter.isPending} onClick={() => exporter.mutate('yaml')}>
            Download network (YAML)
          </button>
          <button type="button" className="secondary" disabled={exporter.isPending} onClick={() => exporter.mutate('json')}>
            Download network (JSON)
          </button>
        </div>
        {exporter.error && <ErrorBox error={exporter.error} />}
      </Panel>
      <Panel title="Import a file">
        <div className="field">
          <label htmlFor={fileId}>File of weft export or ziti ops export (JSON or YAML)</label>
          <input
            id={fileId}
            type="file"
            accept=".json,.yaml,.yml,application/json,application/yaml,text/plain"
            onChange={async (e) => {
              const f = e.target.files?.[0];
              if (!f) return;
              setFileName(f.name);
              setText(await readText(f));
              setPreview(undefined);
              plan.reset();
              apply.reset();
            }}
          />
        </div>
        <div className="button-row">
          <button
            type="button"
            disabled={!text || plan.isPending}
            onClick={() => {
              apply.reset();
              plan.mutate({ text, dryRun: true });
            }}
          >
            Preview changes
          </button>
          <button type="button" disabled={!preview || apply.isPending || apply.isSuccess} onClick={() => apply.mutate({ text, dryRun: false })}>
            {apply.isPending ? 'Importing…' : 'Import'}
          </button>
        </div>
        {plan.error && <ErrorBox error={plan.error} title={`${fileName} cannot be imported (nothing was written):`} />}
        {apply.error && <ErrorBox error={apply.error} title="The import failed (nothing was written):" />}
        {shown && (
          <div role="status" aria-label="Import plan">
            <Notice kind={apply.isSuccess || !changes.length ? 'success' : 'info'}>
              {`${shown.dryRun ? 'Would create' : 'Imported: created'} ${shown.counts.create}, ${shown.dryRun ? 'update' : 'updated'} ${shown.counts.update}, unchanged ${shown.counts.unchanged}, skipped ${shown.counts.skip}.`}
            </Notice>
          </div>
        )}
        {changes.length > 0 && (
          <div className="table-scroll">
            <table aria-label="Planned changes">
              <thead>
                <tr>
                  <th scope="col">Change</th>
                  <th scope="col">Type</th>
                  <th scope="col">Name</th>
                  <th scope="col">Fields</th>
                </tr>
              </thead>
              <tbody>
                {changes.map((p) => (
                  <tr key={`${p.section}/${p.name}`}>
                    <td data-label="Change">{p.action}</td>
                    <td data-label="Type">{p.section}</td>
                    <td data-label="Name">{p.name}</td>
                    <td data-label="Fields">{p.fields?.join(', ') ?? p.reason ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Panel>
    </Page>
  );
}
