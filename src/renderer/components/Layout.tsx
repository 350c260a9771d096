import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import type { Me, ResourceName } from '../lib/types';
import { SIGNED_OUT_KEY } from '../pages/LoginPage';
import { clearSessionState } from '../lib/sessionState';
import { THEMES, useTheme, type Theme } from '../lib/theme';
import { morePages, PAGE_GROUPS, type PageDef } from '../pages/registry';
import { href, useLocationPath } from '../router';
import { useTRPC } from '../trpc';
import { PolicyTestBanner } from './PolicyTestBanner';

/**
 * Header, navigation (a menu button at narrow widths) and the main region; focus moves to the page heading on
 * navigation. `more`: the server's console types; those without a page of their own are listed under "More".
 */
export function Layout({ me, pages, more = [], children }: { me: Me; pages: PageDef[]; more?: readonly ResourceName[]; children: ReactNode }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const path = useLocationPath();
  const main = useRef<HTMLElement>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const [theme, setTheme] = useTheme();
  const logout = useMutation(
    trpc.session.logout.mutationOptions({
      onSuccess: () => {
        clearSessionState();
        sessionStorage.setItem(SIGNED_OUT_KEY, '1');
        return qc.resetQueries();
      },
    }),
  );
  const current = path.split('/')[1] || 'dashboard';
  const groups: Array<{ group: string; items: Array<{ id: string; title: string }> }> = [
    ...PAGE_GROUPS.map((group) => ({ group, items: pages.filter((p) => p.group === group) })),
    { group: 'More', items: morePages(more) },
  ].filter((g) => g.items.length);

  useEffect(() => {
    setMenuOpen(false);
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [path]);

  return (
    <div className="layout">
      <a className="skip-link" href="#main" onClick={(e) => (e.preventDefault(), main.current?.querySelector<HTMLElement>('h1')?.focus())}>
        Skip to content
      </a>
      <header className="topbar">
        <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <a className="brand" href={href('/')}>
          Weft
        </a>
        <div className="user">
          <label className="theme-select">
            <span className="visually-hidden">Theme</span>
            <select value={theme} onChange={(e) => setTheme(e.target.value as Theme)} aria-label="Theme">
              {THEMES.map((t) => (
                <option key={t} value={t}>
                  {t === 'system' ? 'Auto theme' : t === 'light' ? 'Light' : 'Dark'}
                </option>
              ))}
            </select>
          </label>
          <span className="user-name" title={me.identity.id}>
            {me.identity.name}
            {me.identity.isAdmin ? ' (admin)' : ''}
          </span>
          <button type="button" className="secondary" onClick={() => logout.mutate()} disabled={logout.isPending}>
            Sign out
          </button>
        </div>
      </header>
      <nav id="nav" className={menuOpen ? 'nav open' : 'nav'} aria-label="Console">
        {groups.map(({ group, items }) => (
          <div key={group} className="nav-group">
            <h2 className="nav-heading">{group}</h2>
            <ul>
              {items.map((p) => (
                <li key={p.id}>
                  <a href={href(`/${p.id}`)} aria-current={current === p.id ? 'page' : undefined}>
                    {p.title}
                  </a>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </nav>
      <main id="main" ref={main}>
        <PolicyTestBanner />
        {children}
      </main>
    </div>
  );
}
