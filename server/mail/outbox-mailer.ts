// Mail written to a directory instead of sent: the default, so `npm start` works with no mail
// server. Each message is one RFC 5322 file (open it in any mail client); the log names the file,
// never its text, because the links in it are credentials. Files are readable by the owner only.
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import { randomToken } from '../keys';
import type { Logger } from '../logger';
import type { Mailer, OutgoingMail } from './mailer';

export class OutboxMailer implements Mailer {
  private readonly composer: Transporter;

  constructor(
    readonly directory: string,
    private readonly from: string,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {
    this.composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  }

  async send(mail: OutgoingMail): Promise<void> {
    const info = await this.composer.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
    await fs.mkdir(this.directory, { recursive: true, mode: 0o700 });
    const stamp = new Date(this.now()).toISOString().replace(/[:.]/g, '-');
    const name = `${stamp}-${mail.kind}-${randomToken(6)}.eml`;
    const file = path.join(this.directory, name);
    // Written aside and renamed into place: an .eml file in the outbox is always whole, never one
    // a reader (a mail client, a script waiting for it) opens half-written.
    const part = path.join(this.directory, `.${name}.part`);
    await fs.writeFile(part, info.message as Buffer, { mode: 0o600, flag: 'wx' });
    await fs.rename(part, file);
    this.logger.info(
      { mail_kind: mail.kind, outbox_file: file },
      'mail written to the outbox (set MARQUEE_SMTP_URL to send it)',
    );
  }
}
