/** What a share's OAuth options are and how the running frontend checks them (a leaf: the core's config names it). */

export interface ShareOAuthData {
  provider: string;
  emailPatterns?: string[];
  checkInterval?: string;
}

/** A problem with a share's OAuth options; `field` is relative to `oauth` ('' = the section as a whole). */
export interface ShareFieldIssue {
  field: string;
  reason: string;
}

/** Checks OAuth options against the running frontend; given to the core as `CoreConfig.checkShareOAuth`. */
export type ShareOAuthCheck = (oauth: ShareOAuthData) => ShareFieldIssue | undefined;
