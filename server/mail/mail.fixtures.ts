// Tests' mail server: a real SMTP server (smtp-server) on loopback that keeps every message it
// receives, so tests read the mail Marquee sent over SMTP as a person's mailbox would.
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  to: string[];
  subject: string;
  /** The text body, transfer encoding undone. */
  text: string;
  raw: string;
}

/** Quoted-printable and base64 bodies back to text (what nodemailer encodes long lines with). */
export function decodeBody(headers: string, body: string): string {
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(headers)?.[1]?.toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding !== 'quoted-printable') return body;
  const bytes: number[] = [];
  const soft = body.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i]!;
    if (c === '=' && /^[0-9A-F]{2}$/i.test(soft.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** One RFC 5322 message (a single text part, as Marquee sends) as a CapturedMail. */
export function parseMessage(raw: string, to: string[] = []): CapturedMail {
  const split = raw.search(/\r?\n\r?\n/);
  const headers = raw.slice(0, split);
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const unfolded = headers.replace(/\r?\n[ \t]+/g, ' ');
  const subject = /^subject:\s*(.*)$/im.exec(unfolded)?.[1]?.trim() ?? '';
  const recipients = to.length > 0 ? to : (/^to:\s*(.*)$/im.exec(unfolded)?.[1] ?? '').split(',').map((s) => s.trim());
  return { to: recipients, subject: decodeSubject(subject), text: decodeBody(headers, body), raw };
}

/** RFC 2047 encoded words (=?UTF-8?Q?…?= / ?B?) in a subject. */
function decodeSubject(subject: string): string {
  return subject.replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*/gi, (_, mode: string, text: string) =>
    mode.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : decodeBody('content-transfer-encoding: quoted-printable', text.replace(/_/g, ' ')),
  );
}

export class SmtpCapture {
  readonly messages: CapturedMail[] = [];
  private readonly waiters: (() => void)[] = [];

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(): Promise<SmtpCapture> {
    let capture: SmtpCapture | undefined;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const to = session.envelope.rcptTo.map((r) => r.address);
          capture!.receive(parseMessage(Buffer.concat(chunks).toString('utf8'), to));
          callback();
        });
      },
    });
    const port = await new Promise<number>((resolve, reject) => {
      server.on('error', reject);
      server.listen(0, '127.0.0.1', () => resolve((server.server.address() as { port: number }).port));
    });
    capture = new SmtpCapture(server, port);
    return capture;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  private receive(mail: CapturedMail): void {
    this.messages.push(mail);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** The first message to `to` (after `since` messages) matching `test`, waiting up to `timeoutMs`. */
  async waitFor(
    to: string,
    test: (mail: CapturedMail) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<CapturedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find((m) => m.to.includes(to.toLowerCase()) && test(m));
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no mail to ${to} within ${timeoutMs} ms (${this.messages.length} received)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  /** Messages to `to` so far. */
  to(address: string): CapturedMail[] {
    return this.messages.filter((m) => m.to.includes(address.toLowerCase()));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The first dashboard link with this fragment key (`invite`, `reset`) in a mail's text. */
export function linkToken(mail: CapturedMail, key: 'invite' | 'reset', index = 0): string {
  const found = [...mail.text.matchAll(new RegExp(`#${key}=([A-Za-z0-9_-]{43})`, 'g'))][index];
  if (!found) throw new Error(`no #${key}= link in the mail:\n${mail.text}`);
  return found[1]!;
}
