import { useState } from 'react';

/**
 * Two-step action (deletes, bulk actions): the first press asks, the second does it. The question stays (disabled
 * while `busy`) unless `resetOnConfirm`, for a button that stays on the page to be used again.
 */
export function ConfirmButton({
  label,
  confirmLabel,
  onConfirm,
  busy,
  resetOnConfirm,
}: {
  label: string;
  confirmLabel: string;
  onConfirm(): void;
  busy?: boolean;
  resetOnConfirm?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="danger" onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={confirmLabel}>
      <button
        type="button"
        className="danger"
        disabled={busy}
        onClick={() => {
          if (resetOnConfirm) setAsking(false);
          onConfirm();
        }}
        autoFocus
      >
        {confirmLabel}
      </button>
      <button type="button" className="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
