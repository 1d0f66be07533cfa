// Feedback: bug reports and feature requests to the people who run this installation.
import type { Feedback, FeedbackKind, FeedbackList, FeedbackSubmission } from '../contract/feedback';
import type { CallOptions, ClientTransport } from './transport';

const PATHS: Record<FeedbackKind, string> = { bug: '/api/v1/feedback/bugs', feature: '/api/v1/feedback/features' };

export function feedbackRoutes(t: ClientTransport) {
  return {
    send: (kind: FeedbackKind, submission: FeedbackSubmission, options: CallOptions = {}) =>
      t.request<Feedback>({ method: 'POST', path: PATHS[kind], json: submission, idempotent: true, ...options }),
    list: (kind: FeedbackKind) => t.request<FeedbackList>({ method: 'GET', path: PATHS[kind] }),
  };
}
