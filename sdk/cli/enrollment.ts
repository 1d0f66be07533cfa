// First use: enroll a project on this server and keep its credential in the config file. The
// request is written down before it is sent, so a CLI killed between the server's commit and our
// write repeats it with the same Idempotency-Key and gets the same token back (the server
// redelivers it to an exact retry for ten minutes) instead of enrolling a second project.
import os from 'node:os';
import readline from 'node:readline/promises';
import { MarqueeProblem, newIdempotencyKey, type MarqueeClient } from '../client/marquee-client';
import type { CLIEnrollmentRequest, Project } from '../contract/tenants';
import type { ConfigFile, ServerEntry } from './config-file';
import { newClientId } from './config-file';
import { CliFailure, configProblem, EXIT, usage } from './exit-codes';
import { CLI_VERSION } from './version';

export interface EnrollmentInput {
  config: ConfigFile;
  apiUrl: string;
  /** --email, when given. */
  email: string | undefined;
  projectName?: string;
  betaKey?: string;
  /** Asked on a terminal when no --email was given. */
  prompt: ((question: string) => Promise<string>) | undefined;
  /** A client without a credential, and the way to give it one. */
  client: MarqueeClient;
  signal: AbortSignal;
  note: (text: string) => void;
}

export interface Enrolled {
  entry: ServerEntry;
  /** False when the config file already held a credential for this server. */
  enrolledNow: boolean;
}

/** Reads a line from a terminal (the contact email); the answer is not secret, so it is echoed. */
export function terminalPrompt(input: NodeJS.ReadStream, output: NodeJS.WriteStream) {
  return async (question: string): Promise<string> => {
    const rl = readline.createInterface({ input, output });
    try {
      return (await rl.question(question)).trim();
    } finally {
      rl.close();
    }
  };
}

/** The stored credential for this server, enrolling a project first when there is none. */
export async function ensureEnrolled(input: EnrollmentInput): Promise<Enrolled> {
  const stored = (await input.config.read()).servers[input.apiUrl];
  if (stored?.token) return { entry: stored, enrolledNow: false };

  const email = await contactEmail(input, stored);
  const pending = stored?.pending_enrollment;
  const config = await input.config.update((c) => {
    c.client_id ??= newClientId();
    const entry = (c.servers[input.apiUrl] ??= {});
    // Repeat an unanswered enrollment exactly (same key, same body); a new email starts afresh.
    if (!pending || pending.request.email !== email) {
      const request: CLIEnrollmentRequest = {
        client_id: c.client_id,
        email,
        agent_type: 'cli',
        name: 'Marquee CLI',
        platform: `${os.platform()}/${os.arch()}`.slice(0, 80),
        version: CLI_VERSION,
      };
      if (input.projectName !== undefined) request.project_name = input.projectName;
      if (input.betaKey !== undefined) request.beta_key = input.betaKey;
      entry.pending_enrollment = {
        idempotency_key: newIdempotencyKey(),
        request,
        started_at: new Date().toISOString(),
      };
    }
  });
  let pendingNow = config.servers[input.apiUrl]!.pending_enrollment!;
  let enrollment;
  try {
    enrollment = await input.client.enroll(pendingNow.request as CLIEnrollmentRequest, {
      idempotencyKey: pendingNow.idempotency_key,
      signal: input.signal,
    });
  } catch (error) {
    // The redelivery window of a half-finished enrollment closed: that project's token is gone, so
    // forget the request and enroll anew.
    if (!(error instanceof MarqueeProblem && error.code === 'credential_issuance_expired')) throw error;
    input.note('an earlier enrollment from this machine was never completed and has expired; enrolling again');
    const fresh = await input.config.update((c) => {
      c.servers[input.apiUrl]!.pending_enrollment = {
        ...pendingNow,
        idempotency_key: newIdempotencyKey(),
        started_at: new Date().toISOString(),
      };
    });
    pendingNow = fresh.servers[input.apiUrl]!.pending_enrollment!;
    enrollment = await input.client.enroll(pendingNow.request as CLIEnrollmentRequest, {
      idempotencyKey: pendingNow.idempotency_key,
      signal: input.signal,
    });
  }

  const { token, project } = enrollment.data;
  // Read the project back with the new credential: it must be the project just enrolled.
  input.client.useToken(token);
  let seen: Project;
  try {
    seen = (await input.client.project.get()).data;
  } finally {
    input.client.useToken(undefined);
  }
  if (seen.id !== project.id)
    throw new CliFailure(
      EXIT.unexpected,
      'enrollment_mismatch',
      `the new credential reads project ${seen.id}, not the enrolled ${project.id}`,
    );

  const entry: ServerEntry = {
    token,
    project_id: project.id,
    project_name: project.name,
    contact_email: email,
    enrolled_at: new Date().toISOString(),
  };
  await input.config.update((c) => {
    c.servers[input.apiUrl] = entry;
    c.api_url ??= input.apiUrl;
  });
  input.note(
    `enrolled project ${project.id} (${project.name}) on ${input.apiUrl}; its credential is in ${input.config.path}`,
  );
  return { entry, enrolledNow: true };
}

async function contactEmail(input: EnrollmentInput, stored: ServerEntry | undefined): Promise<string> {
  let email = input.email ?? (stored?.pending_enrollment?.request.email as string | undefined);
  if (email === undefined && input.prompt) {
    email = await input.prompt(`No project on ${input.apiUrl} yet. Contact email for a new project: `);
  }
  if (email === undefined || email === '') {
    throw configProblem('enrollment_required', `no credential for ${input.apiUrl} in ${input.config.path}`, {
      hint: 'enroll a project by running the command again with --email you@example.com',
    });
  }
  // The contract's schema, loaded only here: schemas cost every other run their start-up time.
  const { Email } = await import('../contract/tenants');
  if (!Email.safeParse(email).success) throw usage(`${JSON.stringify(email)} is not an email address`);
  return email;
}
