// Operator routes (`/operator/v1/*` on the control origin, the operator bearer only): the people who
// run an installation list projects, suspend and resume them, change plans and grant credits.
import { z } from 'zod';

export interface OperatorProject {
  id: string;
  name: string;
  status: 'active' | 'suspended' | 'cancelled' | 'deleted';
  plan: string;
  intent: 'signage' | 'advertising';
  contact_email: string | null;
  screen_count: number;
  member_count: number;
  active_agent_count: number;
  credit_remaining: number;
  balance_millicredits: string;
  created_at: string;
  updated_at: string;
}

export interface OperatorProjectList {
  items: OperatorProject[];
  next_cursor: string | null;
}

export const OperatorProjectListQuery = z.strictObject({
  status: z.enum(['active', 'suspended']).optional(),
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
});

export const OperatorSuspension = z.strictObject({ reason: z.string().trim().min(1).max(200).optional() });
export const OperatorPlanChange = z.strictObject({ plan: z.string().min(1).max(40) });
/** Whole credits, so a grant is never a fraction; up to ten million at once. */
export const OperatorCreditGrant = z.strictObject({
  credits: z.number().int().min(1).max(10_000_000),
  reason: z.string().trim().min(1).max(200),
});

export interface OperatorCreditGrantResult {
  project: OperatorProject;
  granted_millicredits: string;
}
