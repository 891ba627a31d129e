// A failure in words (api/errors.ts), announced to screen readers; the step-up offers its code challenge.
import { explainError } from '../api/errors';
import { StepUp } from './StepUp';

export function ErrorNotice({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  const explained = explainError(error);
  return (
    <div className="notice notice-error" role="alert">
      <strong>{explained.title}</strong>
      <p>{explained.detail}</p>
      {explained.stepUp && <StepUp />}
      {onRetry && (
        <button type="button" className="button-secondary" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
