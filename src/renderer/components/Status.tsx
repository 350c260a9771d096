import { useId, type ReactNode } from 'react';
import { errorInfo } from '../lib/errors';

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="spinner" role="status" aria-live="polite">
      <span className="spinner-icon" aria-hidden="true" />
      {label}
    </div>
  );
}

/** An error of a query or mutation, with the OpenZiti code when there is one. */
export function ErrorBox({ error, retry, title }: { error: unknown; retry?: () => void; title?: string }) {
  const info = errorInfo(error);
  return (
    <div className="error-box" role="alert">
      <strong>{title ?? info.ziti?.code ?? info.code ?? 'Error'}</strong> <span>{info.message}</span>
      {retry && (
        <button type="button" className="link-button" onClick={retry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Notice({ children, kind = 'info' }: { children: ReactNode; kind?: 'info' | 'success' | 'warning' }) {
  return (
    <div className={`notice notice-${kind}`} role="status">
      {children}
    </div>
  );
}

/** A page: its heading (focused after navigation), actions and content. */
export function Page({
  title,
  actions,
  children,
  description,
}: {
  title: string;
  actions?: ReactNode;
  children: ReactNode;
  description?: ReactNode;
}) {
  const id = useId();
  return (
    <section className="page" aria-labelledby={id}>
      <header className="page-header">
        <h1 id={id} tabIndex={-1}>
          {title}
        </h1>
        {actions && <div className="page-actions">{actions}</div>}
      </header>
      {description && <p className="page-description">{description}</p>}
      {children}
    </section>
  );
}

/** A titled block inside a page. */
export function Panel({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  const id = useId();
  return (
    <section className="panel" aria-labelledby={id}>
      <header className="panel-header">
        <h2 id={id}>{title}</h2>
        {actions && <div className="panel-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}
