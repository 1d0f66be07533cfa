// A sentence for a person from whatever a call threw: the problem's detail, else a fallback.
import { OperationFailedError } from '../../../sdk/client/operations';
import { MarqueeNetworkError, MarqueeProblem } from '../../../sdk/client/problem';

export function problemMessage(error: unknown, fallback: string): string {
  // A background operation (media verification) failed: its problem says why.
  if (error instanceof OperationFailedError) return error.problem.detail || fallback;
  if (error instanceof MarqueeProblem) return error.detail || `${fallback} (${error.status} ${error.code})`;
  if (error instanceof MarqueeNetworkError) return `${fallback}: the server did not answer. Check the connection.`;
  if (error instanceof Error && error.message) return `${fallback}: ${error.message}`;
  return fallback;
}
