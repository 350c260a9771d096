import { useMemo, useState, type ReactNode } from 'react';
import { getPath, setPath } from '../lib/paths';
import { ChipsInput, JsonTextarea } from './inputs';
import { RequiredMark } from './RequiredMark';

/** The JSON-schema subset a form can be generated from; anything else is edited as JSON. */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  $ref?: string;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  definitions?: Record<string, JsonSchema>;
  $defs?: Record<string, JsonSchema>;
}

function resolve(schema: JsonSchema | undefined, root: JsonSchema, depth = 0): JsonSchema {
  if (!schema?.$ref || depth > 20) return schema ?? {};
  const m = /^#\/(definitions|\$defs)\/(.+)$/.exec(schema.$ref);
  const target = m ? root[m[1] as 'definitions' | '$defs']?.[m[2]!] : undefined;
  return resolve({ ...target, ...{ ...schema, $ref: undefined } }, root, depth + 1);
}

const typeOf = (s: JsonSchema) => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type);
const fieldId = (prefix: string, path: string) => `${prefix}-${path.replace(/[^A-Za-z0-9_-]/g, '_')}`;

interface Props {
  schema: JsonSchema;
  value: Record<string, unknown>;
  onChange(value: Record<string, unknown>): void;
  idPrefix: string;
  /** the label of the field the data belongs to (names its JSON editors when they hold invalid JSON) */
  label?: string;
  /** a server validation error inside the data ("portRanges.0.low") and its reason */
  error?: { path: string; reason: string };
}

/** A form generated from a config type's JSON schema: objects, strings, enums, numbers, booleans, arrays. */
const objectOnly = (label: string) => (v: unknown) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? undefined : `${label} must be a JSON object, e.g. {}`;

export function JsonSchemaForm(p: Props) {
  const dataLabel = p.label ?? 'Data';
  const [asJson, setAsJson] = useState(false);
  // while the JSON text does not parse, going back to the form would drop it: the switch waits until it is fixed
  const [rawProblem, setRawProblem] = useState<string>();
  const checkObject = useMemo(() => objectOnly(dataLabel), [dataLabel]);
  const set = (path: string, v: unknown) => p.onChange(setPath(p.value, path, v));
  const errorAt = (path: string) => (p.error?.path === path ? p.error.reason : undefined);

  function describe(id: string, s: JsonSchema, path: string): { describedBy?: string; hint?: ReactNode; error?: ReactNode } {
    const hint = [
      s.description,
      s.pattern && `pattern ${s.pattern}`,
      s.minimum !== undefined && `min ${s.minimum}`,
      s.maximum !== undefined && `max ${s.maximum}`,
    ]
      .filter(Boolean)
      .join('; ');
    const reason = errorAt(path);
    return {
      describedBy: [hint && `${id}-hint`, reason && `${id}-error`].filter(Boolean).join(' ') || undefined,
      hint: hint ? (
        <span id={`${id}-hint`} className="hint">
          {hint}
        </span>
      ) : null,
      error: reason ? (
        <span id={`${id}-error`} className="field-error">
          {reason}
        </span>
      ) : null,
    };
  }

  function node(raw: JsonSchema, path: string, label: string, required: boolean): ReactNode {
    const s = resolve(raw, p.schema);
    const id = fieldId(p.idPrefix, path);
    const value = getPath(p.value, path);
    const d = describe(id, s, path);
    const type = typeOf(s);
    const labelEl = (
      <label htmlFor={id}>
        {label}
        <RequiredMark when={required} />
      </label>
    );
    const wrap = (control: ReactNode) => (
      <div className="field" key={path}>
        {labelEl}
        {control}
        {d.hint}
        {d.error}
      </div>
    );
    if (s.enum && (type === 'string' || type === undefined)) {
      return wrap(
        <select
          id={id}
          value={value === undefined ? '' : String(value)}
          aria-describedby={d.describedBy}
          aria-invalid={!!d.error || undefined}
          onChange={(e) => set(path, e.target.value === '' ? undefined : e.target.value)}
        >
          <option value="">{required ? 'Choose…' : '(unset)'}</option>
          {s.enum.map((v) => (
            <option key={String(v)} value={String(v)}>
              {String(v)}
            </option>
          ))}
        </select>,
      );
    }
    switch (type) {
      case 'object': {
        if (!s.properties) break;
        const req = new Set(s.required ?? []);
        const children = Object.entries(s.properties).map(([k, child]) => node(child, path ? `${path}.${k}` : k, k, req.has(k)));
        if (!path) return <div className="schema-root">{children}</div>;
        return (
          <fieldset key={path} className="schema-object">
            <legend>
              {label}
              <RequiredMark when={required} />
            </legend>
            {d.error}
            {children}
          </fieldset>
        );
      }
      case 'string':
        return wrap(
          <input
            id={id}
            type="text"
            value={typeof value === 'string' ? value : ''}
            aria-describedby={d.describedBy}
            aria-invalid={!!d.error || undefined}
            onChange={(e) => set(path, e.target.value === '' ? undefined : e.target.value)}
          />,
        );
      case 'integer':
      case 'number':
        return wrap(
          <input
            id={id}
            type="number"
            inputMode="numeric"
            step={type === 'integer' ? 1 : 'any'}
            min={s.minimum}
            max={s.maximum}
            value={typeof value === 'number' ? value : ''}
            aria-describedby={d.describedBy}
            aria-invalid={!!d.error || undefined}
            onChange={(e) => set(path, e.target.value === '' ? undefined : Number(e.target.value))}
          />,
        );
      case 'boolean':
        return wrap(
          <select
            id={id}
            value={value === undefined ? '' : String(value)}
            aria-describedby={d.describedBy}
            aria-invalid={!!d.error || undefined}
            onChange={(e) => set(path, e.target.value === '' ? undefined : e.target.value === 'true')}
          >
            <option value="">(unset)</option>
            <option value="true">true</option>
            <option value="false">false</option>
          </select>,
        );
      case 'array': {
        const items = resolve(s.items, p.schema);
        const list = Array.isArray(value) ? value : [];
        const itemType = typeOf(items);
        if (items.enum) {
          return (
            <fieldset key={path} className="schema-object" aria-describedby={d.describedBy}>
              <legend>
                {label}
                <RequiredMark when={required} />
              </legend>
              {items.enum.map((v) => (
                <label key={String(v)} className="inline">
                  <input
                    type="checkbox"
                    checked={list.includes(v)}
                    onChange={(e) => {
                      const next = e.target.checked ? [...list, v] : list.filter((x) => x !== v);
                      set(path, next.length ? next : undefined);
                    }}
                  />
                  {String(v)}
                </label>
              ))}
              {d.hint}
              {d.error}
            </fieldset>
          );
        }
        if (itemType === 'string' || itemType === 'integer' || itemType === 'number') {
          const numeric = itemType !== 'string';
          return wrap(
            <ChipsInput
              id={id}
              values={list.map(String)}
              describedBy={d.describedBy}
              invalid={!!d.error}
              placeholder="type a value, then Enter"
              onChange={(vs) => set(path, vs.length ? (numeric ? vs.map(Number) : vs) : undefined)}
            />,
          );
        }
        if (itemType === 'object' && items.properties) {
          return (
            <fieldset key={path} className="schema-object">
              <legend>
                {label}
                <RequiredMark when={required} />
              </legend>
              {d.error}
              {list.map((_, i) => (
                <div key={i} className="schema-item">
                  {node(items, `${path}.${i}`, `${label} ${i + 1}`, true)}
                  <button
                    type="button"
                    className="secondary"
                    onClick={() =>
                      set(
                        path,
                        list.filter((__, j) => j !== i),
                      )
                    }
                  >
                    {`Remove ${label} ${i + 1}`}
                  </button>
                </div>
              ))}
              <button type="button" className="secondary" onClick={() => set(path, [...list, {}])}>
                {`Add ${label}`}
              </button>
            </fieldset>
          );
        }
        break;
      }
    }
    // anything the generator does not cover is edited as JSON
    if (!path) {
      return (
        <div className="field">
          <label htmlFor={id}>{`${dataLabel} (JSON)`}</label>
          <JsonTextarea
            id={id}
            label={dataLabel}
            value={p.value}
            rows={8}
            check={checkObject}
            onChange={(v) => p.onChange(v as Record<string, unknown>)}
          />
        </div>
      );
    }
    return wrap(
      <JsonTextarea
        id={id}
        label={`${dataLabel}: ${path}`}
        value={value}
        rows={4}
        describedBy={d.describedBy}
        invalid={!!d.error}
        onChange={(v) => set(path, v)}
      />,
    );
  }

  const jsonId = `${p.idPrefix}-json`;
  return (
    <div className="json-schema-form">
      <label className="inline">
        <input
          type="checkbox"
          checked={asJson}
          disabled={asJson && !!rawProblem}
          aria-describedby={asJson && rawProblem ? `${jsonId}-stay` : undefined}
          onChange={(e) => {
            setAsJson(e.target.checked);
            setRawProblem(undefined);
          }}
        />{' '}
        Edit as JSON
      </label>
      {asJson && rawProblem && (
        <span id={`${jsonId}-stay`} className="hint">
          Fix the JSON to go back to the form.
        </span>
      )}
      {asJson ? (
        <div className="field">
          <label htmlFor={jsonId}>{`${dataLabel} (JSON)`}</label>
          <JsonTextarea
            id={jsonId}
            label={dataLabel}
            value={p.value}
            rows={12}
            check={checkObject}
            describedBy={p.error && !p.error.path.length ? `${jsonId}-error` : undefined}
            onProblemChange={setRawProblem}
            onChange={(v) => p.onChange(v as Record<string, unknown>)}
          />
        </div>
      ) : (
        node(p.schema, '', '', false)
      )}
      {p.error && !p.error.path.length ? (
        <p id={`${jsonId}-error`} className="field-error">
          {p.error.reason}
        </p>
      ) : null}
    </div>
  );
}
