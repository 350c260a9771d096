import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useRef } from 'react';
import { ErrorBox, Notice, Page, Panel } from '../components/Status';
import { downloadBase64, readText } from '../lib/files';
import { useSessionState } from '../lib/sessionState';
import type { RouterOutputs } from '../lib/types';
import { Link } from '../router';
import { useTRPC } from '../trpc';
import '../workflows.css';

type Result = RouterOutputs['bulk']['importIdentities'];

export const EXAMPLE_CSV = `name,type,attributes,enrollment
alice,User,staff;eu,ott
build-bot,Device,ci,updb
kiosk-1,Device,kiosk lobby,ott`;

function RowsTable({ result }: { result: Result }) {
  return (
    <div className="table-scroll">
      <table aria-label={result.dryRun ? 'Import preview' : 'Import result'}>
        <thead>
          <tr>
            <th scope="col">Line</th>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Attributes</th>
            <th scope="col">Enrollment</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {result.rows.map((r) => (
            <tr key={r.line} className={r.ok ? undefined : 'row-error'} data-testid="import-row">
              <td>{r.line}</td>
              <td>{r.id ? <Link to={`/identities/${encodeURIComponent(r.id)}`}>{r.name}</Link> : r.name || <span className="muted">—</span>}</td>
              <td>{r.type}</td>
              <td>{r.attributes.map((a) => `#${a}`).join(' ')}</td>
              <td>{r.enrollment}</td>
              <td>
                {r.ok ? (
                  <span className="ok">{result.dryRun ? 'will be created' : 'created'}</span>
                ) : (
                  <span className="bad">{`${r.error?.field}: ${r.error?.reason}`}</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Identities from a CSV file: a preview (the core tries every row and rolls back, so it reports exactly the errors
 * the import will meet), then the import of the good rows, and their enrollment JWTs as one ZIP archive.
 */
export function IdentityImportPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const fileId = useId();
  const textId = useId();
  const helpId = useId();
  // the CSV, its preview, the import's result and the archive's note stay when the user leaves the page and returns
  const [csv, setCsv] = useSessionState('import.csv', '');
  const [preview, setPreview] = useSessionState<Result | undefined>('import.preview', undefined);
  const [result, setResult] = useSessionState<Result | undefined>('import.result', undefined);
  const [archived, setArchived] = useSessionState<string | undefined>('import.archived', undefined);
  const resultHeading = useRef<HTMLHeadingElement>(null);
  const run = useMutation(trpc.bulk.importIdentities.mutationOptions());
  const archive = useMutation(trpc.bulk.enrollmentArchive.mutationOptions());
  const change = (text: string) => {
    setCsv(text);
    setPreview(undefined);
    setResult(undefined);
    setArchived(undefined);
  };
  const createdIds = (result?.rows ?? []).filter((r) => r.ok && r.id).map((r) => r.id!);

  return (
    <Page
      title="Import identities"
      description="Create many identities from a CSV file, with a preview first and the enrollment JWTs as one archive."
    >
      <form
        className="import-input"
        aria-label="CSV to import"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            setPreview(await run.mutateAsync({ csv, dryRun: true }));
            setResult(undefined);
          } catch {
            /* shown below */
          }
        }}
      >
        <p id={helpId} className="hint">
          Columns <code>name</code>, <code>type</code> (User, Device, Service, Router, Default; User if empty), <code>attributes</code> (separated by
          spaces or <code>;</code>) and <code>enrollment</code> (<code>ott</code> — the default, <code>updb</code> or <code>updb:username</code>,{' '}
          <code>ottca:CA name</code>, or <code>none</code>). A header row names them in any order.
        </p>
        <div className="field">
          <label htmlFor={fileId}>CSV file</label>
          <input
            id={fileId}
            type="file"
            accept=".csv,text/csv,text/plain"
            onChange={async (e) => {
              const f = e.target.files?.[0];
              if (f) change(await readText(f));
            }}
          />
        </div>
        <div className="field">
          <label htmlFor={textId}>Or paste the CSV</label>
          <textarea
            id={textId}
            rows={8}
            value={csv}
            onChange={(e) => change(e.target.value)}
            placeholder={EXAMPLE_CSV}
            aria-describedby={helpId}
            spellCheck={false}
          />
        </div>
        <div className="form-actions">
          <button type="submit" disabled={!csv.trim() || run.isPending}>
            {run.isPending && !preview ? 'Checking…' : 'Preview'}
          </button>
          <button type="button" className="secondary" onClick={() => change(EXAMPLE_CSV)}>
            Use the example
          </button>
        </div>
      </form>
      {run.error && <ErrorBox error={run.error} title="Not imported:" />}
      {preview && !result && (
        <Panel title="Preview">
          <p role="status">
            {`${preview.created} row${preview.created === 1 ? '' : 's'} will be created${preview.failed ? `; ${preview.failed} ha${preview.failed === 1 ? 's an error' : 've errors'} and will be skipped` : ''}. Nothing has been created yet.`}
            {preview.ignoredColumns.length > 0 && ` Ignored columns: ${preview.ignoredColumns.join(', ')}.`}
          </p>
          <RowsTable result={preview} />
          <div className="form-actions">
            <button
              type="button"
              disabled={!preview.created || run.isPending}
              onClick={async () => {
                try {
                  setResult(await run.mutateAsync({ csv, dryRun: false }));
                  await qc.invalidateQueries();
                  setTimeout(() => resultHeading.current?.focus(), 0);
                } catch {
                  /* shown above */
                }
              }}
            >
              {run.isPending ? 'Importing…' : `Import ${preview.created} identit${preview.created === 1 ? 'y' : 'ies'}`}
            </button>
          </div>
        </Panel>
      )}
      {result && (
        <section className="panel" aria-labelledby={`${textId}-result`}>
          <h2 id={`${textId}-result`} ref={resultHeading} tabIndex={-1}>
            Imported
          </h2>
          <Notice kind={result.failed ? 'warning' : 'success'}>
            {`Created ${result.created} identit${result.created === 1 ? 'y' : 'ies'}${result.failed ? `; ${result.failed} row${result.failed === 1 ? '' : 's'} not imported` : ''}.`}
          </Notice>
          <RowsTable result={result} />
          {createdIds.length > 0 && (
            <div className="form-actions">
              <button
                type="button"
                disabled={archive.isPending}
                onClick={async () => {
                  try {
                    const r = await archive.mutateAsync({ ids: createdIds });
                    downloadBase64(r.filename, r.base64, 'application/zip');
                    setArchived(
                      `${r.filename}: ${r.files} enrollment JWT${r.files === 1 ? '' : 's'}${r.without.length ? ` (none for ${r.without.join(', ')})` : ''}.`,
                    );
                  } catch {
                    /* shown below */
                  }
                }}
              >
                Download their enrollment JWTs (.zip)
              </button>
              <Link to="/identities">All identities</Link>
            </div>
          )}
          {archive.error && <ErrorBox error={archive.error} />}
          {archived && <Notice kind="success">{archived}</Notice>}
        </section>
      )}
    </Page>
  );
}
