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

export const validationError = (field: string, reason: string, value?: unknown) =>
  new ApiError('COULD_NOT_VALIDATE', 400, 'The supplied request contains an invalid document', {
    field,
    reason,
    value,
  });

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
