import { ProviderError } from './types';

/** fetch with a timeout that turns transport errors into ProviderError without leaking bodies. */
export async function providerFetch(what: string, url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  try {
    return await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const reason = (err as Error).name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : (err as Error).message;
    throw new ProviderError(`${what}: request failed (${reason})`);
  }
}

export async function readJson(what: string, res: Response): Promise<unknown> {
  const text = await res.text().catch(() => '');
  try {
    return JSON.parse(text);
  } catch {
    throw new ProviderError(`${what}: HTTP ${res.status}, response is not JSON`);
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Provider error codes are short ASCII words; anything else is not echoed anywhere. */
export function safeErrorCode(value: unknown): string {
  return typeof value === 'string' && /^[\w.-]{1,64}$/.test(value) ? value : 'unknown_error';
}
