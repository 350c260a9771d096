/** Errors raised by the core; adapters (REST, tRPC) render them in their own envelope. */
export interface FieldCause {
  field: string;
  reason: string;
  value?: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly fieldCause?: FieldCause,
    readonly headers?: Record<string, string>,
    /** for people (the console): `plain` says the same in plain words; `causes` lists every field at fault, the
     * first being `fieldCause`. The REST envelope keeps OpenZiti's message and one cause. */
    readonly forPeople?: { plain?: string; causes?: FieldCause[] },
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * A field value echoed back in an error, bounded: strings and serialized values longer than `max` characters are cut
 * to a string, and a value too deep to serialize (a hostile body) becomes a placeholder instead of failing the reply.
 */
export function echoValue(v: unknown, max: number): unknown {
  if (typeof v === 'string') return v.length > max ? `${v.slice(0, max)}…` : v;
  if (v === undefined || v === null || typeof v === 'number' || typeof v === 'boolean') return v;
  let text: string;
  try {
    text = JSON.stringify(v) ?? '';
  } catch {
    return '(value not shown: it cannot be serialized)';
  }
  return text.length > max ? `${text.slice(0, max)}…` : v;
}

export const validationError = (field: string, reason: string, value?: unknown, forPeople?: ApiError['forPeople']) =>
  new ApiError(
    'COULD_NOT_VALIDATE',
    400,
    'The supplied request contains an invalid document',
    {
      field,
      reason,
      value,
    },
    undefined,
    forPeople,
  );

/** Several fields at fault at once: the first is the error's cause (what REST shows), all are listed for people. */
export function validationErrors(causes: readonly FieldCause[]): ApiError {
  const first = causes[0]!;
  return validationError(first.field, first.reason, first.value, causes.length > 1 ? { causes: [...causes] } : undefined);
}

/** "identities" -> "identity", "service-edge-router-policies" -> "service edge router policy", "cas" -> "CA". */
export function singularOf(entity: string): string {
  if (entity === 'cas') return 'CA';
  return entity
    .replace(/-/g, ' ')
    .replace(/ies$/, 'y')
    .replace(/(?<!s)s$/, '')
    .replace(/\bjwt\b/g, 'JWT');
}

/**
 * OpenZiti's unique-index error (REST keeps its reason word for word), with the plain sentence the console shows:
 * "An identity named eve already exists".
 */
export function duplicateValue(entity: string, field: string, value: unknown): ApiError {
  const what = singularOf(entity);
  const article = /^[aeiou]/i.test(what) ? 'An' : 'A';
  const plain =
    field === 'name'
      ? `${article} ${what} named ${String(value)} already exists`
      : `${article} ${what} with ${field} ${String(value)} already exists`;
  return validationError(field, `duplicate value '${String(value)}' in unique index on ${entity} store`, value, { plain });
}

export const notFound = (what = 'resource') => new ApiError('NOT_FOUND', 404, `The ${what} requested was not found or is no longer available`);

export const unauthorized = () =>
  new ApiError('UNAUTHORIZED', 401, 'The request could not be completed. The session is not authorized or the credentials are invalid');

export const invalidAuth = (message = 'The authentication request failed') => new ApiError('INVALID_AUTH', 401, message);

export const forbidden = (message = 'The requested operation is not allowed') => new ApiError('FORBIDDEN', 403, message);

export const conflict = (code: string, message: string) => new ApiError(code, 409, message);

export const referencedEntity = (message: string) => conflict('CAN_NOT_DELETE_REFERENCED_ENTITY', message);

export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError('RATE_LIMITED', 429, 'The resource is rate limited and the rate limit has been exceeded. Please try again later', undefined, {
    'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });

export const unavailable = (message = 'The server is currently unable to handle the request') => new ApiError('SERVICE_UNAVAILABLE', 503, message);
