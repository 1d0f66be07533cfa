// Outbound mail: SMTP to a real server on loopback, the outbox directory by default, and nothing
// sent for a change that did not commit.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestServer, randomKey } from '../testing/harness';
import { linkToken, parseMessage, SmtpCapture } from './mail.fixtures';
import { sendAfterCommit, type OutgoingMail } from './mailer';
import { capturedLogs } from '../testing/captured-logs';
import { OutboxMailer } from './outbox-mailer';
import { SmtpMailer } from './smtp-mailer';

const LINK = `http://dashboard.localhost:8080/#invite=${'a'.repeat(43)}`;
const mail: OutgoingMail = {
  to: 'person@example.com',
  subject: 'Hello from Marquee',
  text: `A line long enough that quoted-printable wraps it somewhere in the middle of it, then the link:\n\n${LINK}\n`,
  kind: 'invitation',
};

let smtp: SmtpCapture;
beforeAll(async () => {
  smtp = await SmtpCapture.start();
});
afterAll(async () => smtp.stop());

describe('SMTP mail (MARQUEE_SMTP_URL)', () => {
  it('delivers to the SMTP server with the sender, subject and text intact', async () => {
    const { lines, logger } = capturedLogs();
    await new SmtpMailer(smtp.url, 'Marquee <noreply@example.com>', logger).send(mail);
    const got = await smtp.waitFor('person@example.com', (m) => m.subject === 'Hello from Marquee');
    expect(got.text).toContain(LINK);
    expect(got.raw).toMatch(/^From: Marquee <noreply@example\.com>/m);
    expect(lines.join('')).toContain('"mail_kind":"invitation"');
    expect(lines.join('')).not.toContain('#invite=');
  });

  it('fails the send (for the caller to log) when the server is unreachable', async () => {
    const { logger } = capturedLogs();
    await expect(new SmtpMailer('smtp://127.0.0.1:1', 'm@example.com', logger).send(mail)).rejects.toThrow();
  });
});

describe('the outbox directory (no MARQUEE_SMTP_URL)', () => {
  it('writes one owner-only RFC 5322 file per mail and logs its path, never its text', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-outbox-'));
    const { lines, logger } = capturedLogs();
    await new OutboxMailer(path.join(dir, 'outbox'), 'm@example.com', logger, () =>
      Date.parse('2026-11-25T12:00:00Z'),
    ).send(mail);
    const files = fs.readdirSync(path.join(dir, 'outbox'));
    expect(files).toHaveLength(1); // nothing left aside
    expect(files[0]).toMatch(/^2026-11-25T12-00-00-000Z-invitation-[\w-]+\.eml$/);
    const file = path.join(dir, 'outbox', files[0]!);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const parsed = parseMessage(fs.readFileSync(file, 'utf8'));
    expect(parsed.subject).toBe('Hello from Marquee');
    expect(parsed.text).toContain(LINK);
    const log = lines.join('');
    expect(log).toContain(file);
    expect(log).not.toContain('#invite=');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is what a server without MARQUEE_SMTP_URL uses, under its data dir', async () => {
    const server = await TestServer.start();
    try {
      const { token } = await server.enroll();
      const res = await server.request('POST', '/api/v1/invitations', {
        token,
        idempotencyKey: randomKey(),
        json: { kind: 'project_member', emails: ['outbox@example.com'] },
      });
      expect(res.status).toBe(201);
      const outbox = path.join(server.dataDir, 'outbox');
      // The mail is sent after the commit: wait for it. Whole once it is there (written aside, renamed in).
      const mails = () => (fs.existsSync(outbox) ? fs.readdirSync(outbox).filter((f) => f.endsWith('.eml')) : []);
      await expect.poll(() => mails().length).toBe(1);
      const parsed = parseMessage(fs.readFileSync(path.join(outbox, mails()[0]!), 'utf8'));
      const invite = linkToken(parsed, 'invite');
      await expect.poll(() => server.logText()).toContain('outbox_file');
      expect(server.logText()).not.toContain(invite);
    } finally {
      await server.stop();
    }
  });
});

describe('mail after commit', () => {
  it('sends nothing for a transaction that rolled back, and the mail of one that committed', async () => {
    const server = await TestServer.start({ config: { smtpUrl: smtp.url } });
    try {
      const services = server.services;
      await expect(
        services.store.transaction(async (work) => {
          sendAfterCommit(work, services, { ...mail, to: 'rolled-back@example.com' });
          throw new Error('the change failed');
        }),
      ).rejects.toThrow('the change failed');
      await services.store.transaction(async (work) => {
        sendAfterCommit(work, services, { ...mail, to: 'committed@example.com' });
      });
      await smtp.waitFor('committed@example.com');
      expect(smtp.to('rolled-back@example.com')).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
