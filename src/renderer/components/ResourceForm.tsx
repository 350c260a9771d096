import { useQuery } from '@tanstack/react-query';
import { useId, useMemo, useState, type ReactNode } from 'react';
import { deriveFields, useResourceDescription } from '../lib/describe';
import { errorField, errorInfo } from '../lib/errors';
import { getPath, setPath } from '../lib/paths';
import type { ResourceName, RoleKind } from '../lib/types';
import { useTRPC } from '../trpc';
import { JsonSchemaForm, type JsonSchema } from './JsonSchemaForm';
import { ChipsInput, JsonTextarea, RefMultiSelect, RefSelect, TagsEditor } from './inputs';
import { JsonGuardNote, JsonGuardScope, refuseWhileJsonInvalid, useJsonGuard } from './JsonGuard';
import { AttributesField, RolesField } from './RolesField';
import { ErrorBox, Spinner } from './Status';
import { RequiredMark } from './RequiredMark';

export type Values = Record<string, unknown>;
export interface Option {
  value: string;
  label: string;
}

interface Base {
  /** dotted path into the request body, e.g. "primary.updb.allowed" */
  name: string;
  label: string;
  help?: ReactNode;
  /** default (forms of a `resource`): what the core's create or update schema says */
  required?: boolean;
  /** shown only when this returns true for the current values */
  when?: (values: Values) => boolean;
  /** only on create (e.g. fields that cannot change later); default: in the create schema but not the update schema */
  createOnly?: boolean;
  /** dotted paths reset (to undefined) whenever this field changes, e.g. a choice the other fields depend on */
  clears?: string[];
}

export type FieldSpec = Base &
  (
    | { kind: 'text' | 'password'; placeholder?: string; autoComplete?: string }
    | { kind: 'textarea' | 'pem'; rows?: number; placeholder?: string }
    /** min and max default to the schema's minimum and maximum */
    | { kind: 'number'; min?: number; max?: number }
    | { kind: 'checkbox' }
    /**
     * options default to the schema's enum values; given, they label (and order) them, or list the values of a field
     * the schema does not restrict (one only the console has)
     */
    | { kind: 'select'; options?: Option[] }
    | { kind: 'radio'; options?: Option[] }
    | { kind: 'attributes'; roleKind: RoleKind }
    /** a list of plain strings (chips) */
    | { kind: 'list'; placeholder?: string }
    | { kind: 'roles'; roleKind: RoleKind; semanticField?: string }
    | { kind: 'tags' }
    | { kind: 'json'; rows?: number }
    | { kind: 'ref'; resource: ResourceName; nullable?: boolean; filter?: string }
    | { kind: 'refs'; resource: ResourceName }
    /** config data generated from the JSON schema of the config type named by `typeField` */
    | { kind: 'schemaData'; typeField: string }
    /** a list of objects, each edited with `fields` (names relative to the item; their `when` is not applied), e.g. processes of a posture check */
    | { kind: 'repeat'; fields: FieldSpec[]; itemLabel: string }
  );

/** The items of a repeat field as fields with full paths ("processes.0.path"), one group per item. */
function repeatItems(f: FieldSpec & { kind: 'repeat' }, values: Values): Array<{ label: string; fields: FieldSpec[] }> {
  const list = getPath(values, f.name);
  return (Array.isArray(list) ? list : []).map((_, i) => ({
    label: `${f.itemLabel} ${i + 1}`,
    fields: f.fields.map((sub) => ({ ...sub, name: `${f.name}.${i}.${sub.name}` })),
  }));
}

/** Every field on screen, the fields of repeated items included (server errors can name any of them). */
function flatten(fields: FieldSpec[], values: Values): FieldSpec[] {
  return fields.flatMap((f) =>
    f.kind === 'repeat'
      ? [
          f,
          ...flatten(
            repeatItems(f, values).flatMap((item) => item.fields),
            values,
          ),
        ]
      : [f],
  );
}

/** The field a server error belongs to: the longest field name that is the error's field or a prefix of it. */
export function fieldForError(fields: FieldSpec[], errorPath: string | undefined): FieldSpec | undefined {
  if (!errorPath) return undefined;
  return fields.filter((f) => errorPath === f.name || errorPath.startsWith(`${f.name}.`)).sort((a, b) => b.name.length - a.name.length)[0];
}

function SchemaData(p: {
  id: string;
  label: string;
  configTypeId: unknown;
  value: Values;
  onChange(v: Values): void;
  error?: { path: string; reason: string };
}) {
  const trpc = useTRPC();
  const typeId = typeof p.configTypeId === 'string' ? p.configTypeId : '';
  const type = useQuery({ ...trpc.resources.get.queryOptions({ resource: 'config-types', id: typeId }), enabled: !!typeId });
  if (!typeId) return <p className="hint">Choose a config type first.</p>;
  if (type.isPending) return <p className="hint">Loading the config type's schema…</p>;
  if (type.error) return <ErrorBox error={type.error} />;
  return (
    <JsonSchemaForm
      idPrefix={p.id}
      label={p.label}
      schema={(type.data.schema ?? {}) as JsonSchema}
      value={p.value ?? {}}
      onChange={p.onChange}
      error={p.error}
    />
  );
}

interface FormProps {
  /** the type whose body the form edits: what the page leaves out of its fields comes from the core's description */
  resource?: ResourceName;
  fields: FieldSpec[];
  initial: Values;
  mode: 'create' | 'edit';
  submitLabel: string;
  /** turns the form values into the request body */
  toBody?: (values: Values) => unknown;
  onSubmit(body: unknown): Promise<unknown>;
  onCancel?(): void;
  /** accessible name of the form */
  label: string;
}

/**
 * The one form of the console: fields declared per page, values as the request body, and the server's validation
 * errors (COULD_NOT_VALIDATE cause.field) shown next to the field they name. For a `resource`, the facts the core
 * has (required, create-only, enum options, number bounds, the create form's initial body) complete the page's
 * (lib/describe.ts).
 */
export function ResourceForm(p: FormProps) {
  const description = useResourceDescription(p.resource);
  const fields = useMemo(() => deriveFields(p.fields, description.data, p.mode), [p.fields, description.data, p.mode]);
  if (p.resource && description.isPending) return <Spinner />;
  return (
    <>
      {description.error && <ErrorBox error={description.error} retry={() => description.refetch()} />}
      <FormBody
        {...p}
        fields={fields}
        initial={p.mode === 'create' && description.data?.initial ? { ...description.data.initial, ...p.initial } : p.initial}
      />
    </>
  );
}

function FormBody(p: FormProps) {
  const formId = useId();
  const [values, setValues] = useState<Values>(p.initial);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  // JSON editors holding text the form would not submit as shown (invalid JSON): no submitting until fixed
  const jsonGuard = useJsonGuard();
  const blocked = jsonGuard.problems.length > 0;
  const fields = p.fields.filter((f) => (p.mode === 'create' || !f.createOnly) && (!f.when || f.when(values)));
  const errorPath = errorField(error);
  const errorTarget = fieldForError(flatten(fields, values), errorPath);
  // every other field the core names at once (several role sides, say)
  const otherCauses = (errorInfo(error).ziti?.causes ?? []).slice(1);
  const causeFor = (name: string) => otherCauses.find((c) => fieldForError(flatten(fields, values), c.field)?.name === name)?.reason;

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    // also when the button could not be pressed (a form submitted by Enter or by script)
    if (busy || refuseWhileJsonInvalid(jsonGuard)) return;
    setBusy(true);
    setError(undefined);
    try {
      await p.onSubmit(p.toBody ? p.toBody(values) : values);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  function control(f: FieldSpec, id: string, describedBy: string | undefined, invalid: boolean): ReactNode {
    const v = getPath(values, f.name);
    const set = (next: unknown) =>
      setValues((cur) => (f.clears ?? []).reduce((acc, path) => setPath(acc, path, undefined), setPath(cur, f.name, next)));
    const common = { id, 'aria-describedby': describedBy, 'aria-invalid': invalid || undefined, required: f.required };
    switch (f.kind) {
      case 'text':
      case 'password':
        return (
          <input
            {...common}
            type={f.kind}
            value={typeof v === 'string' ? v : ''}
            placeholder={f.placeholder}
            autoComplete={f.autoComplete ?? 'off'}
            onChange={(e) => set(e.target.value === '' ? undefined : e.target.value)}
          />
        );
      case 'textarea':
      case 'pem':
        return (
          <textarea
            {...common}
            rows={f.rows ?? (f.kind === 'pem' ? 10 : 4)}
            className={f.kind === 'pem' ? 'code' : undefined}
            value={typeof v === 'string' ? v : ''}
            placeholder={f.placeholder ?? (f.kind === 'pem' ? '-----BEGIN CERTIFICATE-----' : undefined)}
            spellCheck={false}
            onChange={(e) => set(e.target.value === '' ? undefined : e.target.value)}
          />
        );
      case 'number':
        return (
          <input
            {...common}
            type="number"
            inputMode="numeric"
            min={f.min}
            max={f.max}
            value={typeof v === 'number' ? v : ''}
            onChange={(e) => set(e.target.value === '' ? undefined : Number(e.target.value))}
          />
        );
      case 'checkbox':
        return <input {...common} required={false} type="checkbox" checked={!!v} onChange={(e) => set(e.target.checked)} />;
      case 'select':
        return (
          <select {...common} value={typeof v === 'string' ? v : ''} onChange={(e) => set(e.target.value === '' ? undefined : e.target.value)}>
            {!f.required && <option value="">(none)</option>}
            {f.required && v === undefined && <option value="">Choose…</option>}
            {(f.options ?? []).map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        );
      case 'radio':
        return (
          <div role="radiogroup" aria-labelledby={`${id}-label`} aria-describedby={describedBy} className="radio-group">
            {(f.options ?? []).map((o) => (
              <label key={o.value} className="inline">
                <input type="radio" name={id} value={o.value} checked={(v ?? '') === o.value} onChange={() => set(o.value)} />
                {o.label}
              </label>
            ))}
          </div>
        );
      case 'attributes':
        return <AttributesField id={id} kind={f.roleKind} value={(v as string[]) ?? []} onChange={set} describedBy={describedBy} invalid={invalid} />;
      case 'list':
        return (
          <ChipsInput
            id={id}
            values={(v as string[]) ?? []}
            onChange={(vs) => set(vs)}
            describedBy={describedBy}
            invalid={invalid}
            placeholder={f.placeholder}
          />
        );
      case 'roles':
        return (
          <RolesField
            id={id}
            kind={f.roleKind}
            value={(v as string[]) ?? []}
            onChange={set}
            describedBy={describedBy}
            invalid={invalid}
            semantic={(getPath(values, f.semanticField ?? 'semantic') as 'AllOf' | 'AnyOf') ?? 'AllOf'}
          />
        );
      case 'tags':
        return <TagsEditor id={id} value={(v as Values) ?? {}} onChange={set} />;
      case 'json':
        return <JsonTextarea id={id} label={f.label} value={v} onChange={set} rows={f.rows} describedBy={describedBy} invalid={invalid} />;
      case 'ref':
        return (
          <RefSelect
            id={id}
            label={f.label}
            resource={f.resource}
            value={v as string | null}
            onChange={set}
            nullable={f.nullable}
            filter={f.filter}
            describedBy={describedBy}
            invalid={invalid}
          />
        );
      case 'refs':
        return (
          <RefMultiSelect
            id={id}
            label={f.label}
            resource={f.resource}
            value={(v as string[]) ?? []}
            onChange={set}
            describedBy={describedBy}
            invalid={invalid}
          />
        );
      case 'schemaData': {
        const sub =
          errorPath && errorTarget?.name === f.name
            ? { path: errorPath.slice(f.name.length + 1), reason: errorInfo(error).ziti!.cause!.reason }
            : undefined;
        return (
          <SchemaData id={id} label={f.label} configTypeId={getPath(values, f.typeField)} value={(v as Values) ?? {}} onChange={set} error={sub} />
        );
      }
      case 'repeat': {
        const list = Array.isArray(v) ? v : [];
        return (
          <div className="repeat-items">
            {repeatItems(f, values).map((item, i) => (
              <fieldset key={item.label} className="repeat-item">
                <legend>{item.label}</legend>
                {item.fields.map(renderField)}
                <button type="button" className="secondary" onClick={() => set(list.filter((_, j) => j !== i))}>
                  {`Remove ${item.label.toLowerCase()}`}
                </button>
              </fieldset>
            ))}
            <button type="button" className="secondary" onClick={() => set([...list, {}])}>
              {`Add ${f.itemLabel.toLowerCase()}`}
            </button>
          </div>
        );
      }
    }
  }

  function renderField(f: FieldSpec): ReactNode {
    const id = `${formId}-${f.name.replace(/\./g, '-')}`;
    // by name: the fields of repeated items are rebuilt on every render
    const other = f.kind === 'schemaData' ? undefined : causeFor(f.name);
    const invalid = (errorTarget?.name === f.name && f.kind !== 'schemaData') || other !== undefined;
    const reason = errorTarget?.name === f.name && f.kind !== 'schemaData' ? errorInfo(error).ziti?.cause?.reason : other;
    const describedBy = [f.help ? `${id}-help` : undefined, reason ? `${id}-error` : undefined].filter(Boolean).join(' ') || undefined;
    const grouped = f.kind === 'radio' || f.kind === 'schemaData' || f.kind === 'tags' || f.kind === 'repeat';
    const errorEl = reason && (
      <span id={`${id}-error`} className="field-error" role="alert">
        {reason}
      </span>
    );
    // a ref field remounts when its resource changes (its search box belongs to one resource)
    const key = f.kind === 'ref' ? `${f.name}:${f.resource}` : f.name;
    return (
      <div key={key} className={`field field-${f.kind}`} {...(f.kind === 'repeat' ? { role: 'group', 'aria-labelledby': `${id}-label` } : {})}>
        {f.kind === 'checkbox' ? (
          <label className="inline">
            {control(f, id, describedBy, invalid)}
            {f.label}
          </label>
        ) : (
          <>
            {grouped ? (
              <span className="label" id={`${id}-label`}>
                {f.label}
                <RequiredMark when={f.required} />
              </span>
            ) : (
              <label htmlFor={id} id={`${id}-label`}>
                {f.label}
                <RequiredMark when={f.required} />
              </label>
            )}
            {/* a list's own error (e.g. "must contain at least one") goes above its items */}
            {f.kind === 'repeat' && errorEl}
            {control(f, id, describedBy, invalid)}
          </>
        )}
        {f.help && (
          <span id={`${id}-help`} className="hint">
            {f.help}
          </span>
        )}
        {f.kind !== 'repeat' && errorEl}
      </div>
    );
  }

  return (
    <form className="resource-form" aria-label={p.label} onSubmit={submit} noValidate>
      {error ? <ErrorBox error={error} title="Not saved:" /> : null}
      <JsonGuardScope guard={jsonGuard}>{fields.map(renderField)}</JsonGuardScope>
      <div className="form-actions">
        <button type="submit" disabled={busy || blocked} aria-describedby={blocked ? `${formId}-blocked` : undefined}>
          {busy ? 'Saving…' : p.submitLabel}
        </button>
        {p.onCancel && (
          <button type="button" className="secondary" onClick={p.onCancel}>
            Cancel
          </button>
        )}
        <JsonGuardNote id={`${formId}-blocked`} guard={jsonGuard} />
      </div>
    </form>
  );
}
