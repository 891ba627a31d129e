// A throwaway SMTP server for tests: it accepts every mail on 127.0.0.1 and keeps it in memory,
// decoded enough (subject, plain-text and HTML bodies) for a test to read a mailed code or link.
// The MIME handling is deliberately small: it covers what nodemailer produces, not all of MIME.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** Envelope recipients (RCPT TO), lowercased as given. */
  to: string[];
  /** The message exactly as received (CRLF line ends). */
  raw: string;
  /** Header names lowercased; a repeated header keeps its first value. Values are unfolded, not decoded. */
  headers: Record<string, string>;
  /** Decoded Subject (RFC 2047 encoded words resolved). */
  subject: string;
  /** Decoded text/plain body with LF line ends; '' when the mail has none. */
  text: string;
  /** Decoded text/html body, when present. */
  html?: string;
}

export type MailPredicate = (mail: ReceivedMail) => boolean;

export interface TestSmtpServer {
  /** smtp://127.0.0.1:<port>, ready to pass as the mailer's smtpUrl. */
  url: string;
  port: number;
  /** Every mail received so far, oldest first. */
  messages: ReceivedMail[];
  /**
   * The oldest matching mail not yet returned by next(), waiting for it if needed. Each mail is
   * handed out once, so two calls in a row give two different mails.
   */
  next(predicate?: MailPredicate, timeoutMs?: number): Promise<ReceivedMail>;
  /** The oldest matching mail, received or still to come; does not consume it. */
  waitFor(predicate: MailPredicate, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 5_000;

interface Waiter {
  consume: boolean;
  predicate: MailPredicate;
  resolve(mail: ReceivedMail): void;
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = [];
  const consumed = new WeakSet<ReceivedMail>();
  let waiters: Waiter[] = [];

  function deliver(mail: ReceivedMail): void {
    messages.push(mail);
    // Hand the mail to the first consuming waiter that wants it, and to every non-consuming one.
    let taken = false;
    waiters = waiters.filter((waiter) => {
      if (!waiter.predicate(mail) || (waiter.consume && taken)) return true;
      if (waiter.consume) {
        taken = true;
        consumed.add(mail);
      }
      waiter.resolve(mail);
      return false;
    });
  }

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // Tests close right after their last mail; do not hold the suite for the default 30 s.
    closeTimeout: 1_000,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const envelope = session.envelope;
        deliver({
          from: envelope.mailFrom ? envelope.mailFrom.address : '',
          to: envelope.rcptTo.map((rcpt) => rcpt.address),
          raw,
          ...parseMessage(raw),
        });
        callback();
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A late socket error must not crash the test process.
  server.on('error', () => {});
  const { port } = server.server.address() as AddressInfo;

  function wait(consume: boolean, predicate: MailPredicate, timeoutMs: number): Promise<ReceivedMail> {
    const existing = messages.find((mail) => predicate(mail) && !(consume && consumed.has(mail)));
    if (existing) {
      if (consume) consumed.add(existing);
      return Promise.resolve(existing);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        consume,
        predicate,
        resolve(mail) {
          clearTimeout(timer);
          resolve(mail);
        },
      };
      const timer = setTimeout(() => {
        waiters = waiters.filter((w) => w !== waiter);
        const seen = messages.map((m) => `${m.to.join(',')}: ${m.subject}`).join('; ') || 'none';
        reject(new Error(`No matching mail within ${timeoutMs} ms (received: ${seen})`));
      }, timeoutMs);
      waiters.push(waiter);
    });
  }

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    next: (predicate = () => true, timeoutMs = DEFAULT_TIMEOUT_MS) => wait(true, predicate, timeoutMs),
    waitFor: (predicate, timeoutMs = DEFAULT_TIMEOUT_MS) => wait(false, predicate, timeoutMs),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface ParsedPart {
  headers: Record<string, string>;
  subject: string;
  text: string;
  html?: string;
}

/** Splits headers from body and picks the first text/plain and text/html parts, decoded. */
export function parseMessage(raw: string): ParsedPart {
  const { headers, body } = splitHeaders(raw);
  const bodies: { text?: string; html?: string } = {};
  collectBodies(headers, body, bodies);
  const parsed: ParsedPart = {
    headers,
    subject: decodeEncodedWords(headers['subject'] ?? ''),
    text: bodies.text ?? '',
  };
  if (bodies.html !== undefined) parsed.html = bodies.html;
  return parsed;
}

function splitHeaders(raw: string): { headers: Record<string, string>; body: string } {
  const match = /\r?\n\r?\n/.exec(raw);
  const head = match ? raw.slice(0, match.index) : raw;
  const body = match ? raw.slice(match.index + match[0].length) : '';
  const headers: Record<string, string> = {};
  // Unfold: a line starting with whitespace continues the previous header.
  for (const line of head.replace(/\r?\n(?=[ \t])/g, '').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!(name in headers)) headers[name] = line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function collectBodies(headers: Record<string, string>, body: string, out: { text?: string; html?: string }): void {
  const contentType = headers['content-type'] ?? 'text/plain';
  const mimeType = contentType.split(';')[0].trim().toLowerCase();

  if (mimeType.startsWith('multipart/')) {
    const boundary = headerParam(contentType, 'boundary');
    if (!boundary) return;
    const delimiter = `--${boundary}`;
    const sections = body.split(new RegExp(`\\r?\\n?${escapeRegExp(delimiter)}`));
    // sections[0] is the preamble; the section after the closing delimiter starts with '--'.
    for (const section of sections.slice(1)) {
      if (section.startsWith('--')) break;
      const part = splitHeaders(section.replace(/^[ \t]*\r?\n/, ''));
      collectBodies(part.headers, part.body, out);
    }
    return;
  }

  const isAttachment = /^attachment/i.test(headers['content-disposition'] ?? '');
  if (isAttachment || (mimeType !== 'text/plain' && mimeType !== 'text/html')) return;
  const charset = headerParam(contentType, 'charset') ?? 'utf-8';
  const decoded = decodeBody(body, headers['content-transfer-encoding'] ?? '7bit', charset).replace(/\r\n/g, '\n');
  if (mimeType === 'text/plain') out.text ??= decoded;
  else out.html ??= decoded;
}

function decodeBody(body: string, transferEncoding: string, charset: string): string {
  const encoding = transferEncoding.trim().toLowerCase();
  if (encoding === 'base64') return decodeBytes(Buffer.from(body.replace(/\s+/g, ''), 'base64'), charset);
  if (encoding === 'quoted-printable') return decodeBytes(decodeQuotedPrintable(body), charset);
  return body;
}

/** Soft line breaks (`=` at line end) vanish; `=XX` becomes one byte. */
export function decodeQuotedPrintable(input: string): Buffer {
  const unwrapped = input.replace(/[ \t]+(?=\r?\n)/g, '').replace(/=\r?\n/g, '');
  const parts: Buffer[] = [];
  for (const [token, hex] of unwrapped.matchAll(/=([0-9A-Fa-f]{2})|[^=]+|=/g)) {
    parts.push(hex ? Buffer.from([parseInt(hex, 16)]) : Buffer.from(token, 'utf8'));
  }
  return Buffer.concat(parts);
}

/** RFC 2047 `=?charset?B|Q?text?=`; whitespace between two encoded words is dropped, as the RFC says. */
export function decodeEncodedWords(value: string): string {
  return value
    .replace(/(\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_whole, charset: string, kind: string, text: string) => {
      const bytes =
        kind.toUpperCase() === 'B'
          ? Buffer.from(text, 'base64')
          : decodeQuotedPrintable(text.replace(/_/g, ' '));
      return decodeBytes(bytes, charset);
    });
}

function decodeBytes(bytes: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset.trim().toLowerCase()).decode(bytes);
  } catch {
    return bytes.toString('utf8');
  }
}

function headerParam(value: string, name: string): string | undefined {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value);
  return match ? (match[1] ?? match[2]) : undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
