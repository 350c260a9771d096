/** OpenZiti's response envelope: {data, meta} on success, {error, meta} on failure. */
export const API_VERSION = '0.0.1';
export const API_ENROLLMENT_VERSION = '0.0.1';

export function baseMeta(extra?: object): Record<string, unknown> {
  return { apiEnrollmentVersion: API_ENROLLMENT_VERSION, apiVersion: API_VERSION, ...extra };
}

export function envelope(data: unknown, meta?: object) {
  return { data, meta: baseMeta(meta) };
}

export function errorEnvelope(e: { code: string; message: string; requestId: string; cause?: unknown; causeMessage?: string }) {
  return {
    error: {
      code: e.code,
      message: e.message,
      requestId: e.requestId,
      ...(e.cause ? { cause: e.cause } : {}),
      ...(e.causeMessage ? { causeMessage: e.causeMessage } : {}),
    },
    meta: baseMeta(),
  };
}
