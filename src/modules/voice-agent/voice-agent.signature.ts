// The external voice agent's signature: `X-Twin-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
// "<t>.<raw body>">` keyed with VOICE_AGENT_SECRET. Good within 5 minutes of its time and once only
// (the replay store is a table, so a copy sent to another process is refused as well).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { lt, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { voiceAgentSignatures } from './voice-agent.tables.js';

export const SIGNATURE_HEADER = 'x-twin-signature';
/** How far a signature's time may be from now, either way. */
export const SIGNATURE_WINDOW_SECONDS = 300;

export interface SignatureParts {
  time: number;
  v1: string;
}

/** The header's parts, or undefined when it is not `t=<digits>,v1=<64 hex>`. */
export function parseSignature(header: unknown): SignatureParts | undefined {
  if (typeof header !== 'string' || header.length > 200) return undefined;
  const fields = new Map<string, string>();
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at > 0) fields.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  const t = fields.get('t');
  const v1 = fields.get('v1')?.toLowerCase();
  if (!t || !/^\d{1,12}$/.test(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1)) return undefined;
  return { time: Number(t), v1 };
}

export function signBody(secret: string, time: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${time}.${rawBody}`).digest('hex');
}

/** The header a voice agent sends for this body (the tests and the README's example sign with it). */
export function signatureHeader(secret: string, rawBody: string, time = Math.floor(Date.now() / 1000)): string {
  return `t=${time},v1=${signBody(secret, time, rawBody)}`;
}

/** Whether the signature is the body's, and within its window; says nothing of reuse. */
export function signatureMatches(secret: string, parts: SignatureParts, rawBody: string, nowSeconds: number): boolean {
  if (Math.abs(nowSeconds - parts.time) > SIGNATURE_WINDOW_SECONDS) return false;
  const expected = Buffer.from(signBody(secret, parts.time, rawBody), 'hex');
  return timingSafeEqual(expected, Buffer.from(parts.v1, 'hex'));
}

/** Takes the signature for this call: false when it was taken before (a replay). Drops rows whose window closed. */
export async function claimSignature(db: Executor, parts: SignatureParts): Promise<boolean> {
  await db.delete(voiceAgentSignatures).where(lt(voiceAgentSignatures.expiresAt, sql`now()`));
  const taken = await db
    .insert(voiceAgentSignatures)
    .values({ signature: parts.v1, expiresAt: new Date((parts.time + SIGNATURE_WINDOW_SECONDS + 1) * 1000) })
    .onConflictDoNothing()
    .returning({ signature: voiceAgentSignatures.signature });
  return taken.length === 1;
}
