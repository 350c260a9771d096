import { TRPCClientError } from '@trpc/client';
import type { ZitiErrorData } from '../../shared/console';

export interface ErrorInfo {
  message: string;
  /** tRPC code, e.g. UNAUTHORIZED */
  code?: string;
  /** the OpenZiti error: code, message, cause.field/reason */
  ziti?: ZitiErrorData;
}

/** What the console shows for any error of a query or mutation. */
export function errorInfo(error: unknown): ErrorInfo {
  if (error instanceof TRPCClientError) {
    const data = error.data as { code?: string; ziti?: ZitiErrorData } | undefined;
    const ziti = data?.ziti;
    const message = ziti?.plain ?? (ziti?.cause ? `${ziti.cause.field}: ${ziti.cause.reason}` : error.message);
    return { message: message || 'Request failed', code: data?.code, ziti: data?.ziti };
  }
  if (error instanceof Error) return { message: error.message };
  return { message: String(error) };
}

export const isUnauthorized = (error: unknown) => errorInfo(error).code === 'UNAUTHORIZED';

/** The field a validation error points at (e.g. "enrollment.updb", "data.portRanges.0.low"). */
export const errorField = (error: unknown): string | undefined => errorInfo(error).ziti?.cause?.field;
