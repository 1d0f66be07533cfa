// Accounts (Model A), projects and enrollment (Model P): request schemas and response types.
import { z } from 'zod';
import { AGENT_NAME_MAX, PROJECT_NAME_MAX } from './limits';

export const CAPABILITY_AREAS = ['screens', 'content', 'playlists', 'advertising', 'reports', 'project'] as const;
export type CapabilityArea = (typeof CAPABILITY_AREAS)[number];

export const Email = z.string().min(3).max(254).pipe(z.email());

/** One whitespace-separated word that reads as a host name or URL (`example.com`, `shop.io/x`). */
const DOMAIN_WORD = /^[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}(\/\S*)?$/i;

/** spec ProjectName: trimmed printable 1 to 60; no controls, URL-looking text, @, www. or ://. */
export const ProjectName = z
  .string()
  .transform((s) => s.trim())
  .pipe(
    z
      .string()
      .min(1)
      .max(PROJECT_NAME_MAX)
      .refine((s) => !/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(s), 'must not contain control characters')
      .refine((s) => !s.includes('@'), 'must not contain @')
      .refine((s) => !/www\./i.test(s) && !s.includes('://'), 'must not look like a URL')
      .refine((s) => !s.split(/\s+/).some((w) => DOMAIN_WORD.test(w)), 'must not look like a URL'),
  );

export const AccountCreate = z.strictObject({ email: Email });
export type AccountCreate = z.infer<typeof AccountCreate>;

export const AGENT_TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;

export const CLIEnrollmentRequest = z.strictObject({
  intent: z.enum(['signage', 'advertising']).optional(),
  client_id: z.string().regex(/^cli_[A-Za-z0-9_-]{43}$/, 'must be cli_ followed by 43 base64url characters'),
  email: Email,
  beta_key: z.string().min(1).max(200).optional(),
  name: z.string().min(1).max(AGENT_NAME_MAX).optional(),
  agent_type: z.string().regex(AGENT_TYPE_PATTERN).optional(),
  platform: z.string().max(80).optional(),
  version: z.string().max(40).optional(),
  project_name: ProjectName.optional(),
});
export type CLIEnrollmentRequest = z.infer<typeof CLIEnrollmentRequest>;

export const ProjectPatch = z.strictObject({ name: ProjectName });
export type ProjectPatch = z.infer<typeof ProjectPatch>;

export type TenantStatus = 'active' | 'suspended' | 'cancelled' | 'deleted';

export interface Account {
  id: string;
  email: string;
  revision: number;
  status: TenantStatus;
  used_bytes: number;
  reserved_bytes: number;
  screen_count: number;
  content_limit_bytes: number;
  screen_limit: number;
}

/**
 * GET /api/v1/account with a project bearer: the project seen through the account shape (the
 * hosted peer's CLI reads it first to check its credential). `email` is the contact address, when
 * the project has one; `name`, `plan` and the credit balance are the project's.
 */
export interface ProjectAccount extends Omit<Account, 'email'> {
  email?: string;
  name: string;
  plan: string;
  credit_remaining: number;
  created_at: string;
  updated_at: string;
}

export interface AccountCreated {
  account: Account;
  /** The one-time credential: shown once, redelivered only to an exact retry until acknowledged. */
  token: string;
  issuance_id: string;
}

export interface Project {
  id: string;
  name: string;
  revision: number;
  status: TenantStatus;
  plan: string;
  intent: 'signage' | 'advertising';
  /** Unverified contact address given at enrollment; grants no authority. */
  contact_email: string | null;
  used_bytes: number;
  reserved_bytes: number;
  content_limit_bytes: number;
  screen_count: number;
  screen_limit: number;
  credit_remaining: number;
  created_at: string;
  updated_at: string;
}

export interface CLIEnrollment {
  project: Project;
  token: string;
  issuance_id: string;
  issuance_expires_at: string;
}

export interface ProjectCapabilities {
  plan: string;
  independent_advertiser: boolean;
  screens: boolean;
  revision: number;
  effective: CapabilityArea[];
}
