// Feedback (`/api/v1/feedback/{bugs,features}` for tenants, `/operator/v1/feedback` for operators):
// bug reports and feature requests a project sends to the people who run the installation.
import { z } from 'zod';

/** Title and body bounds the CLI's feedback command is written against (CLI-SURFACE). */
export const FEEDBACK_TITLE_MAX = 120;
export const FEEDBACK_BODY_MAX = 4000;

export const FEEDBACK_KINDS = ['bug', 'feature'] as const;
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];

export const FeedbackContext = z.strictObject({
  cli_version: z.string().min(1).max(64).optional(),
  /** `<os>/<arch>`, as `process.platform/process.arch` prints it. */
  platform: z
    .string()
    .max(64)
    .regex(/^[a-z0-9_.-]+\/[a-z0-9_.-]+$/i, 'expected <os>/<arch>')
    .optional(),
  command: z.string().min(1).max(200).optional(),
});
export type FeedbackContext = z.infer<typeof FeedbackContext>;

export const FeedbackSubmission = z.strictObject({
  title: z.string().trim().min(1).max(FEEDBACK_TITLE_MAX),
  body: z.string().trim().min(1).max(FEEDBACK_BODY_MAX),
  context: FeedbackContext.optional(),
});
export type FeedbackSubmission = z.infer<typeof FeedbackSubmission>;

export interface Feedback {
  id: string;
  kind: FeedbackKind;
  title: string;
  body: string;
  context: FeedbackContext;
  created_at: string;
}

export interface FeedbackList {
  items: Feedback[];
}

/** The operator's view: every project's submissions, each naming its project. */
export interface OperatorFeedback extends Feedback {
  project_id: string;
}

export interface OperatorFeedbackList {
  items: OperatorFeedback[];
  next_cursor: string | null;
}

export const OperatorFeedbackListQuery = z.strictObject({
  kind: z.enum(FEEDBACK_KINDS).optional(),
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
});
