// A real OpenID Connect provider (oidc-provider) on loopback, for browser-less sign-in tests.
// The interaction step (login + consent) is answered by code: the test says which account signs in
// next. `browser` follows redirects with a cookie jar, as a browser would, until the service's callback.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface TestAccount {
  email?: string;
  /** true unless set; null leaves the claim out. */
  email_verified?: boolean | null;
  given_name?: string;
  family_name?: string;
}

export interface TestClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
}

export interface TestIdentityProvider {
  issuer: string;
  accounts: Map<string, TestAccount>;
  /** The subject the next interaction signs in. */
  signInAs(subject: string): void;
  /** Follows redirects from `url` until one leaves for `stopAt`; returns that URL. */
  browse(url: string, stopAt: string): Promise<URL>;
  /** An access token for the client (client credentials grant). */
  clientToken(clientId: string, clientSecret: string): Promise<string>;
  /** Whether the provider still considers the token active. */
  introspect(token: string, clientId: string, clientSecret: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface IdentityProviderOptions {
  /**
   * The issuer the provider names in its discovery document and id_tokens, when not its own URL: an
   * attacker's provider claiming another provider's issuer (its endpoints and keys stay its own).
   */
  claimedIssuer?: string;
}

function claimsOf(sub: string, account: TestAccount): Record<string, unknown> {
  const { email_verified = true, ...rest } = account;
  return email_verified === null ? { sub, ...rest } : { sub, email_verified, ...rest };
}

export async function startIdentityProvider(clients: TestClient[], options: IdentityProviderOptions = {}): Promise<TestIdentityProvider> {
  const accounts = new Map<string, TestAccount>();
  let nextSubject = '';
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test' };

  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => void route(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(options.claimedIssuer ?? issuer, {
    clients: clients.map((client) => ({
      ...client,
      grant_types: ['authorization_code', 'client_credentials'],
      response_types: ['code'],
      token_endpoint_auth_method: client.client_secret ? 'client_secret_post' : 'none',
    })),
    jwks: { keys: [jwk] },
    cookies: { keys: ['test-cookie-key'] },
    ttl: { AccessToken: 3600, AuthorizationCode: 60, ClientCredentials: 600, Grant: 3600, IdToken: 3600, Interaction: 600, Session: 3600 },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name'] },
    scopes: ['openid', 'email', 'profile', 'api'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, sub: string) =>
      accounts.has(sub) ? { accountId: sub, claims: () => claimsOf(sub, accounts.get(sub)!) } : undefined,
  });
  handler = provider.callback();

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!req.url?.startsWith('/interaction/')) return handler!(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      const accountId = details.session?.accountId ?? nextSubject;
      const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId: details.params.client_id });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  }

  const jar = new Map<string, string>();
  async function browse(start: string, stopAt: string): Promise<URL> {
    let url = new URL(start);
    for (let hop = 0; hop < 10; hop++) {
      if (url.href.startsWith(stopAt)) return url;
      const response = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
      });
      for (const header of response.headers.getSetCookie()) {
        const [pair] = header.split(';');
        const [name, ...rest] = pair.split('=');
        jar.set(name.trim(), rest.join('='));
      }
      const location = response.headers.get('location');
      if (!location) throw new Error(`provider stopped at ${url.href} with ${response.status}: ${await response.text()}`);
      url = new URL(location, url);
    }
    throw new Error('too many redirects');
  }

  const form = (values: Record<string, string>) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(values).toString(),
  });

  return {
    issuer,
    accounts,
    signInAs(subject) {
      nextSubject = subject;
      jar.clear();
    },
    browse,
    async clientToken(client_id, client_secret) {
      const response = await fetch(`${issuer}/token`, form({ grant_type: 'client_credentials', client_id, client_secret, scope: 'api' }));
      const body = (await response.json()) as { access_token?: string };
      if (!body.access_token) throw new Error(`no token: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async introspect(token, client_id, client_secret) {
      const response = await fetch(`${issuer}/token/introspection`, form({ token, client_id, client_secret }));
      return ((await response.json()) as { active: boolean }).active;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
