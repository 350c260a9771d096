import { createContext, useContext, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from 'react';

/**
 * Forms with JSON editors: a JSON editor (JsonTextarea) whose text does not parse, or parses to something its field
 * cannot take, reports it to the form around it; the form disables its submit button with the reason beside it and
 * its submit handler refuses to send, so a form never submits a value other than the one it shows. A form hosting
 * JSON editors calls `useJsonGuard()`, wraps its fields in `<JsonGuardScope>` and renders `<JsonGuardNote>` next to
 * its submit button (ResourceForm does, so every page built on it has this).
 */

/** A JSON editor the form cannot submit: the editor's element ID (to focus it), its field's label and why. */
export interface JsonProblem {
  id: string;
  label: string;
  reason: string;
}

interface Registry {
  report(id: string, problem: JsonProblem | undefined): void;
}

const JsonEditors = createContext<Registry | null>(null);

export interface JsonGuard {
  /** the editors that block submitting (state: what to render) */
  problems: JsonProblem[];
  /** the same, up to date at the moment of the call (for the submit handler) */
  current(): JsonProblem[];
  registry: Registry;
}

export function useJsonGuard(): JsonGuard {
  const reported = useRef(new Map<string, JsonProblem>());
  const [problems, setProblems] = useState<JsonProblem[]>([]);
  const registry = useMemo<Registry>(
    () => ({
      report(id, problem) {
        if (problem) reported.current.set(id, problem);
        else if (!reported.current.delete(id)) return;
        setProblems([...reported.current.values()]);
      },
    }),
    [],
  );
  return useMemo(() => ({ problems, current: () => [...reported.current.values()], registry }), [problems, registry]);
}

/** The part of a form whose JSON editors report to `guard`. */
export function JsonGuardScope(p: { guard: JsonGuard; children: ReactNode }) {
  return <JsonEditors.Provider value={p.guard.registry}>{p.children}</JsonEditors.Provider>;
}

/**
 * Reports a JSON editor's problem (none: `reason` undefined) to the form around it, until the reason changes or the
 * editor goes away. Reported in a layout effect: before the browser handles the next event (an Enter, a click).
 */
export function useJsonProblemReport(id: string, label: string, reason: string | undefined): void {
  const registry = useContext(JsonEditors);
  useLayoutEffect(() => {
    if (!registry || !reason) return;
    registry.report(id, { id, label, reason });
    return () => registry.report(id, undefined);
  }, [registry, id, label, reason]);
}

/** "Fix the JSON in Data first." / "Fix the JSON in Data and Schema first." */
export function jsonBlockedReason(problems: JsonProblem[]): string {
  const labels = [...new Set(problems.map((p) => p.label))];
  const named = labels.length > 1 ? `${labels.slice(0, -1).join(', ')} and ${labels.at(-1)!}` : (labels[0] ?? '');
  return `Fix the JSON in ${named} first.`;
}

/**
 * Why the form's submit button is disabled, beside it (give its `id` to the button's aria-describedby). Nothing while
 * every JSON editor holds what the form would submit.
 */
export function JsonGuardNote(p: { id: string; guard: JsonGuard }) {
  if (!p.guard.problems.length) return null;
  return (
    <p id={p.id} className="field-error json-guard-note" role="alert">
      {jsonBlockedReason(p.guard.problems)}
    </p>
  );
}

/** In a submit handler: true (and the first blocking editor focused) when the form must not submit. */
export function refuseWhileJsonInvalid(guard: JsonGuard): boolean {
  const [first] = guard.current();
  if (!first) return false;
  document.getElementById(first.id)?.focus();
  return true;
}
