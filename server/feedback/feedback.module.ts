// Start-up wiring of feedback: it only advertises itself (the CLI's doctor looks for the flag).
import type { Services } from '../services';

export function installFeedback(services: Services): void {
  Object.assign(services.features, { feedback: true });
}
