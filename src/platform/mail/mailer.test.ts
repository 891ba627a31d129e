import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseMessage, startSmtpServer, type TestSmtpServer } from '../../../test/support/smtp.js';
import { createMailer, type Mailer } from './mailer.js';

const FROM = 'Digital Twin <no-reply@twin.test>';

describe('createMailer (outbox)', () => {
  let root: string;
  let outboxDir: string;
  let mailer: Mailer;
  let logged: Array<{ obj: object; msg?: string }>;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'mailer-test-'));
    // Not created up front: the mailer must create it.
    outboxDir = path.join(root, 'outbox', 'nested');
    logged = [];
    mailer = createMailer({ from: FROM, outboxDir, logger: { info: (obj, msg) => logged.push({ obj, msg }) } });
  });

  afterEach(async () => {
    await mailer.close();
    await rm(root, { recursive: true, force: true });
  });

  it('writes one parseable .eml per mail and logs it', async () => {
    expect(mailer.kind).toBe('outbox');
    await mailer.send({ to: 'ada@example.com', subject: 'Your code', text: 'Your code is 042917.' });

    const files = await readdir(outboxDir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^\d{8}T\d{9}Z-[0-9a-f]{4}-[0-9a-f]{8}\.eml$/);

    const raw = await readFile(path.join(outboxDir, files[0]), 'utf8');
    expect(raw).toMatch(/^To: ada@example\.com\r$/m);
    expect(raw).toMatch(/^Subject: Your code\r$/m);
    expect(raw).toMatch(/^From: Digital Twin <no-reply@twin\.test>\r$/m);
    const parsed = parseMessage(raw);
    expect(parsed.subject).toBe('Your code');
    expect(parsed.text).toContain('Your code is 042917.');

    expect(logged).toEqual([
      { obj: { to: 'ada@example.com', subject: 'Your code', file: path.join(outboxDir, files[0]) }, msg: expect.any(String) },
    ]);
  });

  it('names files so they sort in send order, and keeps html alongside text', async () => {
    for (let i = 0; i < 5; i++) {
      await mailer.send({ to: `u${i}@example.com`, subject: `Mail ${i}`, text: `plain ${i}`, html: `<p>html ${i}</p>` });
    }
    const files = (await readdir(outboxDir)).sort();
    expect(files).toHaveLength(5);
    const subjects = await Promise.all(
      files.map(async (f) => parseMessage(await readFile(path.join(outboxDir, f), 'utf8'))),
    );
    expect(subjects.map((m) => m.subject)).toEqual(['Mail 0', 'Mail 1', 'Mail 2', 'Mail 3', 'Mail 4']);
    expect(subjects[4].text.trim()).toBe('plain 4');
    expect(subjects[4].html).toBe('<p>html 4</p>');
  });
});

describe('createMailer (smtp)', () => {
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    smtp = await startSmtpServer();
  });

  afterAll(async () => {
    await smtp.close();
  });

  it('delivers a real message to an SMTP server', async () => {
    const mailer = createMailer({ smtpUrl: smtp.url, from: FROM, outboxDir: '/nonexistent/never-used' });
    expect(mailer.kind).toBe('smtp');
    try {
      await mailer.send({ to: 'grace@example.com', subject: 'Welcome aboard', text: 'Hello Grace, welcome.' });
    } finally {
      await mailer.close();
    }

    const mail = await smtp.next((m) => m.to.includes('grace@example.com'));
    expect(mail.from).toBe('no-reply@twin.test');
    expect(mail.raw).toContain('Subject: Welcome aboard');
    expect(mail.raw).toContain('Hello Grace, welcome.');
    expect(mail.subject).toBe('Welcome aboard');
    expect(mail.text.trim()).toBe('Hello Grace, welcome.');
  });

  it('decodes encoded subjects and quoted-printable bodies so a test can read a mailed code', async () => {
    const mailer = createMailer({ smtpUrl: smtp.url, from: FROM, outboxDir: '/nonexistent/never-used' });
    // Non-ASCII and a long line force nodemailer into RFC 2047 and quoted-printable.
    const text = `Bonjour Zoë, votre code de vérification est 381204. ${'Ce code expire bientôt. '.repeat(6)}`;
    try {
      await mailer.send({ to: 'zoe@example.com', subject: 'Code de vérification — étape 2', text, html: '<b>381204</b>' });
    } finally {
      await mailer.close();
    }

    const mail = await smtp.next((m) => m.to.includes('zoe@example.com'));
    expect(mail.raw).not.toContain('vérification est');
    expect(mail.subject).toBe('Code de vérification — étape 2');
    expect(mail.text.trim()).toBe(text.trim());
    expect(mail.text.match(/\b(\d{6})\b/)?.[1]).toBe('381204');
    expect(mail.html).toBe('<b>381204</b>');
  });
});

describe('startSmtpServer', () => {
  it('hands each mail to next() once, waits for mail still to come, and times out clearly', async () => {
    const smtp = await startSmtpServer();
    const mailer = createMailer({ smtpUrl: smtp.url, from: FROM, outboxDir: '/nonexistent/never-used' });
    try {
      const pending = smtp.next((m) => m.to.includes('later@example.com'));
      await mailer.send({ to: 'first@example.com', subject: 'one', text: '1' });
      await mailer.send({ to: 'later@example.com', subject: 'two', text: '2' });
      expect((await pending).subject).toBe('two');

      expect((await smtp.next()).subject).toBe('one');
      expect((await smtp.waitFor((m) => m.subject === 'one')).subject).toBe('one');
      await expect(smtp.next(undefined, 50)).rejects.toThrow(/No matching mail within 50 ms/);
      expect(smtp.messages.map((m) => m.subject)).toEqual(['one', 'two']);
    } finally {
      await mailer.close();
      await smtp.close();
    }
  });
});
