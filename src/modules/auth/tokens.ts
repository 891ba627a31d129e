// Session tokens: HS256 JWTs valid 24 hours, each naming its server-side session (sid).
import { SignJWT, jwtVerify } from 'jose';

export const TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

export interface TokenClaims {
  userId: string;
  sessionId: string;
}

export interface TokenSigner {
  sign(claims: TokenClaims, lifetimeSeconds?: number): Promise<string>;
  /** The claims of a valid, unexpired token, or null. */
  verify(token: string): Promise<TokenClaims | null>;
}

export function createTokenSigner(secret: string, purpose = 'session'): TokenSigner {
  const key = new TextEncoder().encode(secret);
  return {
    sign: ({ userId, sessionId }, lifetimeSeconds = TOKEN_LIFETIME_SECONDS) =>
      new SignJWT({ sid: sessionId, typ: purpose })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(userId)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimeSeconds)
        .sign(key),
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'] });
        if (payload.typ !== purpose || typeof payload.sub !== 'string' || typeof payload.sid !== 'string') return null;
        return { userId: payload.sub, sessionId: payload.sid };
      } catch {
        return null;
      }
    },
  };
}
