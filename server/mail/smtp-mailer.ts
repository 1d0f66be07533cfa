// Mail through an SMTP server (MARQUEE_SMTP_URL), with nodemailer: STARTTLS when the server
// offers it on smtp://, TLS from the first byte on smtps://.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../logger';
import type { Mailer, OutgoingMail } from './mailer';

/** A mail server that does not answer within this long is given up on (the send is logged as failed). */
const SMTP_TIMEOUT_MS = 30_000;

export class SmtpMailer implements Mailer {
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
    private readonly logger: Logger,
  ) {
    this.transport = nodemailer.createTransport(url, {
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
    } as never);
  }

  async send(mail: OutgoingMail): Promise<void> {
    const info = await this.transport.sendMail({
      from: this.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
    });
    this.logger.info({ mail_kind: mail.kind, message_id: info.messageId }, 'mail sent');
  }
}
