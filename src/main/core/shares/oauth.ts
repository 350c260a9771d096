/** What a share's OAuth options are and how the running frontend checks them (a leaf: the core's config names it). */

/** A claim condition: the ID token's or userinfo's claim `name` equals (a list claim: contains) `value`. */
export interface ShareClaimRule {
  name: string;
  value: string;
}

/** Who may enter beyond a verified email; each kind given must be met (see frontend/accessRules.ts). */
export interface ShareAccessRules {
  emailPatterns?: string[];
  /** GitHub organization logins */
  githubOrgs?: string[];
  /** GitHub teams, "org/team-slug" */
  githubTeams?: string[];
  claims?: ShareClaimRule[];
  /** Google Workspace domains (the `hd` claim) */
  googleDomains?: string[];
}

/** Paths (an anchored regular expression) with a stricter rule. */
export interface SharePathRule extends ShareAccessRules {
  path: string;
}

export interface ShareOAuthData extends ShareAccessRules {
  /** the provider (configs with one), or the first of `providers` */
  provider?: string;
  /** several providers: a login with any of them (a chooser page lets the user pick) */
  providers?: string[];
  checkInterval?: string;
  /** regular expressions of paths served without a login */
  skipPaths?: string[];
  pathRules?: SharePathRule[];
}

/** A problem with a share's options; `field` is relative to `oauth` ('' = the section as a whole). */
export interface ShareFieldIssue {
  field: string;
  reason: string;
}

/** The share data the frontend checks beyond `oauth`: custom domains and their certificate. */
export interface ShareCheckData {
  oauth?: ShareOAuthData;
  domains?: string[];
  domainTls?: { cert: string; key: string };
}

/**
 * Checks OAuth options against the running frontend; given to the core as `CoreConfig.checkShareOAuth`. Its `share`
 * member, when present, checks the whole share data instead (custom domains too), with `field` relative to the data.
 */
export type ShareOAuthCheck = ((oauth: ShareOAuthData & { provider: string }) => ShareFieldIssue | undefined) & {
  share?: (data: ShareCheckData) => ShareFieldIssue | undefined;
};
