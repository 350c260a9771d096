import { useState } from 'react';

export type Theme = 'light' | 'dark' | 'system';
export const THEMES: readonly Theme[] = ['system', 'light', 'dark'];
const KEY = 'weft-console-theme';

/** The theme chosen in this browser (localStorage), `system` (follow the OS) when none or unreadable. */
export function storedTheme(): Theme {
  try {
    const t = localStorage.getItem(KEY);
    return THEMES.includes(t as Theme) ? (t as Theme) : 'system';
  } catch {
    return 'system';
  }
}

/** Applies a theme to the page: `data-theme` on <html> (styles.css), none for `system`. */
export function applyTheme(theme: Theme): void {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** The theme, and a setter that applies and remembers it. */
export function useTheme(): [Theme, (t: Theme) => void] {
  const [theme, setTheme] = useState(storedTheme);
  return [
    theme,
    (t: Theme) => {
      setTheme(t);
      applyTheme(t);
      try {
        if (t === 'system') localStorage.removeItem(KEY);
        else localStorage.setItem(KEY, t);
      } catch {
        /* applied for this page only */
      }
    },
  ];
}
