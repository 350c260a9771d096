/** The service wizard's plan: the steps it creates, in order (planned in serviceWizard.ts). */

export type StepKey =
  'intercept-config' | 'host-config' | 'service' | 'dial-policy' | 'bind-policy' | 'service-edge-router-policy' | 'edge-router-policy';

/** A role as shown: `#attr` as is, `@id` with the entity's name (`(new)` for what the plan itself creates). */
export interface RoleDisplay {
  role: string;
  name: string;
}

export interface WizardStep {
  key: StepKey;
  /** the console resource (and REST collection) the step creates in */
  resource: string;
  name: string;
  /** one sentence: what it is for */
  summary: string;
  /** the create body; `$<step>` stands for the id a previous step created (`@$service` in roles) */
  body: Record<string, unknown>;
  /** role sides shown with names */
  roles?: Record<string, RoleDisplay[]>;
  /** how many entities each role side matches now */
  matches?: Record<string, number>;
}

export interface WizardPlan {
  steps: WizardStep[];
  /** facts the preview states: which router hosts it, why an edge router policy is or is not created */
  notes: string[];
}
