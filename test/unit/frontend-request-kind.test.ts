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

  it('treats only top-level navigations as pages', () => {
    expect(isApiRequest({ accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'sec-fetch-mode': 'navigate' })).toBe(false);
    expect(isApiRequest({ accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' })).toBe(false);
    expect(isApiRequest({ accept: 'application/xhtml+xml' })).toBe(false);
    expect(isApiRequest({ accept: 'text/html, application/json' })).toBe(false);
    expect(isApiRequest({ accept: 'application/json', 'sec-fetch-mode': 'navigate' })).toBe(false);
  });

  it('treats fetch() and XHR over http (no Sec-Fetch-*) as API calls', () => {
    // Browsers send Sec-Fetch-* only to https and localhost; a plain fetch() or XHR then sends Accept: */*.
    expect(isApiRequest({ accept: '*/*' })).toBe(true);
    expect(isApiRequest({})).toBe(true);
    expect(isApiRequest({ accept: 'text/plain, */*;q=0.01' })).toBe(true);
    expect(isApiRequest({ accept: 'text/html;q=0' })).toBe(true);
  });

  it('goes by Sec-Fetch-Mode when present, whatever Accept says', () => {
    expect(isApiRequest({ accept: 'text/html', 'sec-fetch-mode': 'cors' })).toBe(true);
    expect(isApiRequest({ accept: 'text/html', 'sec-fetch-mode': 'same-origin' })).toBe(true);
  });
});
