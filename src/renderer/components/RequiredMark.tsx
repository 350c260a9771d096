/** The " *" after the label of a required field (screen readers hear the input's `required` instead). */
export function RequiredMark({ when }: { when?: boolean }) {
  return when ? (
    <span aria-hidden="true" className="required-mark">
      {' *'}
    </span>
  ) : null;
}
