import { describe, expect, it } from 'vitest';
import { isApiRequest } from '../../src/main/frontend/requestKind';

describe('isApiRequest', () => {
  it('recognises scripts and API clients', () => {
    expect(isApiRequest({ 'x-requested-with': 'XMLHttpRequest' })).toBe(true);
    expect(isApiRequest({ accept: 'application/json' })).toBe(true);
    expect(isApiRequest({ accept: 'application/json, text/plain, */*' })).toBe(true);
    expect(isApiRequest({ accept: 'text/html;q=0.5, application/json' })).toBe(true);
    expect(isApiRequest({ accept: '*/*', 'sec-fetch-mode': 'cors' })).toBe(true);
    expect(isApiRequest({ accept: 'image/webp,*/*', 'sec-fetch-mode': 'no-cors' })).toBe(true);
  });

  it('treats navigations and plain clients as browsers', () => {
    expect(isApiRequest({})).toBe(false);
    expect(isApiRequest({ accept: '*/*' })).toBe(false);
    expect(isApiRequest({ accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'sec-fetch-mode': 'navigate' })).toBe(false);
    expect(isApiRequest({ accept: 'text/html, application/json' })).toBe(false);
    expect(isApiRequest({ accept: 'text/html', 'sec-fetch-mode': 'cors' })).toBe(false);
  });
});
