// A real authorization server with the device authorization grant (oidc-provider, features.deviceFlow)
// on loopback, for the subscription connection's tests. The person's part is scripted without a
// browser: HTTP requests to the provider's device pages (the code form, its confirmation), then its
// interaction (sign-in and consent), approved or declined. A second, confidential client stands for
// the subscription's model API, which introspects the access tokens it is sent.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export const DEVICE_CLIENT_ID = 'twin-service';
const MODEL_API_CLIENT = { client_id: 'model-api', client_secret: 'model-api-secret-for-tests' };

export interface DeviceProviderOptions {
  /** false: a provider without the device grant (no device endpoint). */
  deviceFlow?: boolean;
  /** false: the provider has the device grant, but the service's client may not use it (unauthorized_client). */
  deviceGrantForClient?: boolean;
  /** Lifetime of device codes (default 600 s). */
  deviceCodeTtlSeconds?: number;
  /** Lifetime of access tokens (default 3600 s). */
  accessTokenTtlSeconds?: number;
}

export interface TestDeviceProvider {
  issuer: string;
  /** The person signs in as `subject` and approves the sign-in whose page (verification URI with the code) is given. */
  approve(verificationUriComplete: string, subject: string): Promise<void>;
  /** The person signs in and declines at the consent step. */
  decline(verificationUriComplete: string, subject: string): Promise<void>;
  /** Whether the token is an active access token issued to the service's client (the model API's check). */
  isServiceAccessToken(token: string): Promise<boolean>;
  /** Revokes a token (a refresh token: later refreshes are refused). */
  revoke(token: string): Promise<void>;
  /** Device authorization requests and token requests the provider received. */
  readonly deviceRequests: number;
  readonly tokenRequests: number;
  /** The next token request is answered slow_down (oidc-provider never asks it by itself). */
  slowDownNext(): void;
  close(): Promise<void>;
}

export async function startDeviceProvider(options: DeviceProviderOptions = {}): Promise<TestDeviceProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test' };
  let nextDecision: { subject: string; approve: boolean } = { subject: 'nobody', approve: false };
  let deviceRequests = 0;
  let tokenRequests = 0;
  let slowDown = false;

  const server: Server = createServer((req, res) => void route(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const deviceFlow = options.deviceFlow ?? true;
  const clientDevice = deviceFlow && options.deviceGrantForClient !== false;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: DEVICE_CLIENT_ID,
        grant_types: clientDevice ? ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'] : ['authorization_code', 'refresh_token'],
        response_types: clientDevice ? [] : ['code'],
        redirect_uris: clientDevice ? [] : [`${issuer}/nowhere`],
        token_endpoint_auth_method: 'none',
      },
      { ...MODEL_API_CLIENT, grant_types: [], response_types: [], redirect_uris: [], token_endpoint_auth_method: 'client_secret_post' },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['device-test-cookie-key'] },
    ttl: {
      AccessToken: options.accessTokenTtlSeconds ?? 3600,
      DeviceCode: options.deviceCodeTtlSeconds ?? 600,
      Grant: 3600,
      IdToken: 3600,
      Interaction: 600,
      RefreshToken: 86_400,
      Session: 3600,
    },
    scopes: ['openid', 'offline_access'],
    features: {
      devInteractions: { enabled: false },
      deviceFlow: { enabled: deviceFlow },
      introspection: { enabled: true },
      revocation: { enabled: true },
    },
    // The service asks for offline_access; this provider grants the refresh token whenever the client may use one.
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
  });
  const handler = provider.callback();

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'POST' && req.url === '/device/auth') deviceRequests += 1;
    if (req.method === 'POST' && req.url === '/token') {
      tokenRequests += 1;
      if (slowDown) {
        slowDown = false;
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'slow_down', error_description: 'polling too fast' }));
        return;
      }
    }
    if (!req.url?.startsWith('/interaction/')) return handler(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      const decision = nextDecision;
      if (!decision.approve) {
        await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'End-User declined the consent' }, { mergeWithLastSubmission: false });
        return;
      }
      const grant = new provider.Grant({ accountId: decision.subject, clientId: details.params.client_id });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId: decision.subject }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  }

  /** What a browser does: GET the page, submit its form (hidden fields and the code), follow redirects, submit again. */
  async function visit(start: string): Promise<void> {
    const jar = new Map<string, string>();
    const send = async (url: URL, form?: URLSearchParams): Promise<Response> => {
      const response = await fetch(url, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '),
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: form?.toString(),
      });
      for (const header of response.headers.getSetCookie()) {
        const [pair] = header.split(';');
        const [name, ...rest] = pair.split('=');
        jar.set(name.trim(), rest.join('='));
      }
      return response;
    };
    let url = new URL(start);
    let response = await send(url);
    for (let step = 0; step < 12; step++) {
      const location = response.headers.get('location');
      if (location) {
        url = new URL(location, url);
        response = await send(url);
        continue;
      }
      const html = await response.text();
      const form = /<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
      const fields = new URLSearchParams();
      for (const input of form?.[2].matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g) ?? []) fields.set(input[1], decode(input[2]));
      // A form carrying the code (the page's own submission, then its confirmation) is submitted; any
      // other page is the provider's last word (success, or the code form again once the sign-in ended).
      if (!form || !fields.has('user_code')) return;
      url = new URL(decode(form[1]), url);
      response = await send(url, fields);
    }
    throw new Error('the device pages did not end');
  }

  return {
    issuer,
    get deviceRequests() {
      return deviceRequests;
    },
    get tokenRequests() {
      return tokenRequests;
    },
    slowDownNext() {
      slowDown = true;
    },
    async approve(verificationUriComplete, subject) {
      nextDecision = { subject, approve: true };
      await visit(verificationUriComplete);
    },
    async decline(verificationUriComplete, subject) {
      nextDecision = { subject, approve: false };
      await visit(verificationUriComplete);
    },
    async isServiceAccessToken(token) {
      const response = await fetch(`${issuer}/token/introspection`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, ...MODEL_API_CLIENT }).toString(),
      });
      const body = (await response.json()) as { active?: boolean; client_id?: string; token_type?: string };
      return body.active === true && body.client_id === DEVICE_CLIENT_ID && body.token_type !== 'refresh_token';
    },
    async revoke(token) {
      const response = await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: DEVICE_CLIENT_ID }).toString(),
      });
      if (!response.ok) throw new Error(`revocation failed: ${response.status}`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function decode(value: string): string {
  return value.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#x2F;/g, '/');
}
