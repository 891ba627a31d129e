// Outgoing mail. With an SMTP URL it delivers through nodemailer's SMTP transport; without one it
// builds the same RFC 822 message and drops it as an .eml file in an outbox folder, so development
// and tests can read every mail the service would have sent.
import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Transporter } from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  readonly kind: 'outbox' | 'smtp';
  close(): Promise<void>;
}

export interface MailLogger {
  info(obj: object, msg?: string): void;
}

export interface MailerOptions {
  /** e.g. smtp://user:pass@host:587 or smtps://host:465; absent means outbox mode. */
  smtpUrl?: string;
  from: string;
  outboxDir: string;
  logger?: MailLogger;
}

/**
 * nodemailer is loaded at the first mail, not at start: a service sends mail rarely, and the module
 * holds ~3 MB of heap in every process (docs/decisions.md, "The service as deployed").
 */
function lazyTransport(make: (mailer: (typeof import('nodemailer'))['default']) => Transporter) {
  let transport: Promise<Transporter> | undefined;
  return {
    get: () => (transport ??= import('nodemailer').then((module) => make(module.default))),
    async close() {
      (await transport)?.close();
    },
  };
}

export function createMailer(opts: MailerOptions): Mailer {
  return opts.smtpUrl ? createSmtpMailer(opts.smtpUrl, opts) : createOutboxMailer(opts);
}

function createSmtpMailer(smtpUrl: string, opts: MailerOptions): Mailer {
  const transport = lazyTransport((nodemailer) => nodemailer.createTransport(smtpUrl, { from: opts.from }));
  return {
    kind: 'smtp',
    async send(message) {
      const info = await (await transport.get()).sendMail(toMailOptions(message));
      // Never log the URL: it carries the SMTP credentials.
      opts.logger?.info({ to: message.to, subject: message.subject, messageId: info.messageId }, 'mail sent');
    },
    close: transport.close,
  };
}

function createOutboxMailer(opts: MailerOptions): Mailer {
  // windows newlines: CRLF is what RFC 5322 mandates and what mail clients expect in an .eml.
  const transport = lazyTransport((nodemailer) => nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' }, { from: opts.from }));
  return {
    kind: 'outbox',
    async send(message) {
      const info = await (await transport.get()).sendMail(toMailOptions(message));
      if (!Buffer.isBuffer(info.message)) throw new Error('Outbox transport did not return a buffered message');
      // Every time, not once: someone may clear the folder while the service runs.
      await mkdir(opts.outboxDir, { recursive: true });
      const file = path.join(opts.outboxDir, outboxFileName());
      // Write then rename so anything watching the folder never reads half a message.
      await writeFile(`${file}.tmp`, info.message);
      await rename(`${file}.tmp`, file);
      opts.logger?.info({ to: message.to, subject: message.subject, file }, 'mail written to outbox');
    },
    close: transport.close,
  };
}

function toMailOptions(message: MailMessage): { to: string; subject: string; text: string; html?: string } {
  const options: { to: string; subject: string; text: string; html?: string } = {
    to: message.to,
    subject: message.subject,
    // CRLF line ends, as RFC 5322 has them: quoted-printable (chosen for a text with a line over 76
    // characters, such as a link) then folds each long line alone; with bare LF it folds across line
    // ends and can split a short line, such as a token a person copies from the .eml.
    text: message.text.replace(/\r?\n/g, '\r\n'),
  };
  if (message.html !== undefined) options.html = message.html;
  return options;
}

let sequence = 0;

/** `20261103T222745123Z-0001-<hex>.eml`: sorts by time, then by send order within one process. */
function outboxFileName(): string {
  const stamp = new Date().toISOString().replace(/[-:.]/g, '');
  sequence = (sequence + 1) % 0x10000;
  return `${stamp}-${sequence.toString(16).padStart(4, '0')}-${randomBytes(4).toString('hex')}.eml`;
}
