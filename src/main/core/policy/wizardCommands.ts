import type { StepKey, WizardPlan, WizardStep } from './wizardPlan';

/**
 * The service wizard's plan as the equivalent `ziti` CLI commands and Management API requests, so an operator can
 * see (and script) exactly what the wizard does. Generated from the same plan the dry run and the create execute.
 *
 * - CLI: `ziti edge create …` in the plan's order, every word quoted for a POSIX shell. Entities are named (`@name`,
 *   config names): the CLI resolves names to ids itself, so the commands also work on another network with the
 *   same names.
 * - REST: POST requests with JSON bodies. Ids of entities that exist now are written as they are; the id a previous
 *   request creates is written `${VARIABLE}`, the variable the request it comes from names (`saveIdAs`: its
 *   response's `data.id`).
 */

export const MANAGEMENT_API_BASE = '/edge/management/v1';

export interface RestRequest {
  method: 'POST';
  path: string;
  body: Record<string, unknown>;
  /** the variable later bodies use for this request's `data.id` */
  saveIdAs: string;
}

export interface WizardCommands {
  cli: string[];
  rest: RestRequest[];
}

const REF = /^(@?)\$([a-z-]+)$/;
const CONFIG_TYPES: Partial<Record<StepKey, string>> = { 'intercept-config': 'intercept.v1', 'host-config': 'host.v1' };

/** A word for a POSIX shell: as is when it holds nothing the shell interprets, else single-quoted. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_./:=@%+-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A list flag's value: the CLI reads it as one CSV record, so values with commas or quotes are CSV-quoted. */
function csv(values: string[]): string {
  return values.map((v) => (/[",\r\n]/.test(v) || /^\s|\s$/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(',');
}

/** The shell variable holding the id a step creates: `service` → SERVICE_ID. */
export function idVariable(key: StepKey): string {
  return `${key.replace(/-/g, '_').toUpperCase()}_ID`;
}

export function wizardCommands(plan: WizardPlan): WizardCommands {
  const byKey = new Map(plan.steps.map((s) => [s.key, s]));
  const plannedName = (key: string): string => {
    const step = byKey.get(key as StepKey);
    if (!step) throw new Error(`wizard plan refers to ${key}, which it does not create`);
    return step.name;
  };

  /** A role for the CLI: `@$step` → `@<name>`, `@id` → `@<name>` (as the preview shows it), `#attr` as is. */
  const cliRoles = (step: WizardStep, side: string): string[] => {
    const list = step.body[side] as string[];
    const shown = step.roles?.[side] ?? [];
    return list.map((r, i) => {
      const ref = REF.exec(r);
      if (ref) return `${ref[1]}${plannedName(ref[2]!)}`;
      if (r.startsWith('@')) return shown[i]?.role === r ? shown[i]!.name : r;
      return r;
    });
  };
  const roleFlag = (step: WizardStep, side: string, flag: string): string[] => {
    const list = cliRoles(step, side);
    return list.length ? [flag, csv(list)] : [];
  };

  const cli = plan.steps.map((step) => {
    const b = step.body;
    let words: string[];
    switch (step.key) {
      case 'intercept-config':
      case 'host-config':
        words = ['config', step.name, CONFIG_TYPES[step.key]!, JSON.stringify(b.data)];
        break;
      case 'service': {
        const configs = (b.configs as string[]).map((c) => plannedName(REF.exec(c)?.[2] ?? c));
        const attrs = b.roleAttributes as string[];
        words = [
          'service',
          step.name,
          ...(configs.length ? ['--configs', csv(configs)] : []),
          ...(attrs.length ? ['--role-attributes', csv(attrs)] : []),
          '--encryption',
          b.encryptionRequired ? 'ON' : 'OFF',
        ];
        break;
      }
      case 'dial-policy':
      case 'bind-policy':
        words = [
          'service-policy',
          step.name,
          String(b.type),
          '--semantic',
          String(b.semantic),
          ...roleFlag(step, 'identityRoles', '--identity-roles'),
          ...roleFlag(step, 'serviceRoles', '--service-roles'),
        ];
        break;
      case 'service-edge-router-policy':
        words = [
          'service-edge-router-policy',
          step.name,
          '--semantic',
          String(b.semantic),
          ...roleFlag(step, 'serviceRoles', '--service-roles'),
          ...roleFlag(step, 'edgeRouterRoles', '--edge-router-roles'),
        ];
        break;
      case 'edge-router-policy':
        words = [
          'edge-router-policy',
          step.name,
          '--semantic',
          String(b.semantic),
          ...roleFlag(step, 'identityRoles', '--identity-roles'),
          ...roleFlag(step, 'edgeRouterRoles', '--edge-router-roles'),
        ];
        break;
    }
    return ['ziti', 'edge', 'create', ...words].map(shellQuote).join(' ');
  });

  const restValue = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const m = REF.exec(value);
      if (!m) return value;
      if (!byKey.has(m[2] as StepKey)) throw new Error(`wizard plan refers to ${m[2]}, which it does not create`);
      return `${m[1]}\${${idVariable(m[2] as StepKey)}}`;
    }
    if (Array.isArray(value)) return value.map(restValue);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, restValue(v)]));
    return value;
  };
  const rest = plan.steps.map((step): RestRequest => ({
    method: 'POST',
    path: `${MANAGEMENT_API_BASE}/${step.resource}`,
    body: restValue(step.body) as Record<string, unknown>,
    saveIdAs: idVariable(step.key),
  }));
  return { cli, rest };
}
