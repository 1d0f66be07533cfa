// Outbound mail: what features send (invitations, sign-in resets, address verification) and the
// one way they send it. Mail goes out after the transaction that decided it commits, and a failure
// to send is logged (never its text: links in it are credentials), never a failed request.
import type { Logger } from '../logger';
import type { Work } from '../store/store';

export interface OutgoingMail {
  to: string;
  subject: string;
  /** Plain text; links in it may be credentials, so it is never logged. */
  text: string;
  /** What the mail is for (`invitation`, `sign_in_reset`, …): the log names it, not its text. */
  kind: string;
}

export interface Mailer {
  /** Hands the mail to its transport; resolves once it is accepted (sent, or written to the outbox). */
  send(mail: OutgoingMail): Promise<void>;
}

/**
 * Sends the mail once `work` commits: a rolled-back request sends nothing, and the reply never
 * waits for the mail server (so its timing says nothing about whether a mail was sent at all).
 */
export function sendAfterCommit(work: Work, services: { mailer: Mailer; logger: Logger }, mail: OutgoingMail): void {
  work.afterCommit(() => {
    services.mailer.send(mail).catch((error: unknown) => {
      services.logger.error({ mail_kind: mail.kind, err: describeError(error) }, 'mail not sent');
    });
  });
}

/** A transport error without what it may quote of the message or the credentials of the server. */
function describeError(error: unknown): string {
  if (error instanceof Error)
    return `${error.name}: ${(error as { code?: string }).code ?? error.message.slice(0, 200)}`;
  return 'unknown error';
}
