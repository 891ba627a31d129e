// An LTI 1.3 platform simulated on loopback: its own RSA keys, its JWKS served over HTTP (fetches
// counted), the authorization step (reading the tool's OIDC request) and id_tokens signed with jose.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

const LTI = 'https://purl.imsglobal.org/spec/lti/claim/';

export interface AuthRequest {
  params: URLSearchParams;
  state: string;
  nonce: string;
  redirectUri: string;
}

export interface TestLtiPlatform {
  issuer: string;
  authLoginUrl: string;
  jwksUrl: string;
  /** How many times the JWKS was fetched. */
  keyFetches(): number;
  /** A new signing key (new kid); the JWKS serves only it from now on. */
  rotate(): Promise<void>;
  /** Reads the tool's redirect to the authorization endpoint. */
  authorize(location: string): AuthRequest;
  /** A resource link launch's id_token for `nonce`, with claims overridden (undefined removes one). */
  idToken(nonce: string, overrides?: Record<string, unknown>, options?: { key?: 'current' | 'stranger'; expiresIn?: number; issuedAt?: number }): Promise<string>;
  close(): Promise<void>;
}

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function newKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

export interface LtiPlatformOptions {
  clientId: string;
  deploymentId: string;
  contextId: string;
  /** The host its URLs name (127.0.0.1 unless given: `localhost` makes it another site than a tool on 127.0.0.1). */
  host?: string;
  /**
   * A course page at /course that frames the tool (`toolLoginUrl`: its form posts the login into the
   * frame), and an authorization endpoint at /auth that answers the tool's request with the form post
   * of a signed id_token, as a platform does for a signed-in person.
   */
  toolLoginUrl?: string;
}

export async function startLtiPlatform(options: LtiPlatformOptions): Promise<TestLtiPlatform> {
  let generation = 1;
  let key = await newKey('key-1');
  const stranger = await newKey('key-1');
  let fetches = 0;
  const server: Server = createServer((request, response) => {
    if (request.url === '/certs') {
      fetches++;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.publicJwk] }));
      return;
    }
    const url = new URL(request.url ?? '/', origin);
    if (url.pathname === '/course' && options.toolLoginUrl) {
      const fields = { iss: issuer, login_hint: 'person-1', target_link_uri: options.toolLoginUrl, client_id: options.clientId, lti_deployment_id: options.deploymentId };
      response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Course</title><h1>Biology</h1>
<iframe name="tool" title="Digital Twin" width="900" height="700"></iframe>
<form id="launch" method="post" target="tool" action="${escapeHtml(options.toolLoginUrl)}">${hiddenFields(fields)}</form>
<script>document.getElementById('launch').submit()</script>`);
      return;
    }
    if (url.pathname === '/auth' && options.toolLoginUrl) {
      const params = url.searchParams;
      void platform.idToken(params.get('nonce') ?? '').then((idToken) => {
        response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Signing in</title>
<form id="post" method="post" action="${escapeHtml(params.get('redirect_uri') ?? '')}">${hiddenFields({ id_token: idToken, state: params.get('state') ?? '' })}</form>
<script>document.getElementById('post').submit()</script>`);
      });
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const origin = `http://${options.host ?? '127.0.0.1'}:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}/lms`;

  const platform: TestLtiPlatform = {
    issuer,
    authLoginUrl: `${origin}/auth`,
    jwksUrl: `${origin}/certs`,
    keyFetches: () => fetches,
    async rotate() {
      key = await newKey(`key-${++generation}`);
    },
    authorize(location) {
      const url = new URL(location);
      if (`${url.origin}${url.pathname}` !== `${origin}/auth`) throw new Error(`not this platform's authorization endpoint: ${location}`);
      const params = url.searchParams;
      return { params, state: params.get('state')!, nonce: params.get('nonce')!, redirectUri: params.get('redirect_uri')! };
    },
    async idToken(nonce, overrides = {}, signing = {}) {
      const now = signing.issuedAt ?? Math.floor(Date.now() / 1000);
      const claims: Record<string, unknown> = {
        iss: issuer,
        aud: options.clientId,
        sub: 'lms-user-1',
        nonce,
        iat: now,
        exp: now + (signing.expiresIn ?? 300),
        email: 'learner@school.example',
        given_name: 'Ada',
        family_name: 'Lovelace',
        [`${LTI}message_type`]: 'LtiResourceLinkRequest',
        [`${LTI}version`]: '1.3.0',
        [`${LTI}deployment_id`]: options.deploymentId,
        [`${LTI}target_link_uri`]: 'https://twins.example/api/lti/launch',
        [`${LTI}resource_link`]: { id: 'link-1' },
        [`${LTI}context`]: { id: options.contextId, label: 'BIO101', title: 'Biology' },
        [`${LTI}roles`]: ['http://purl.imsglobal.org/vocab/lis/v2/membership#Learner', 'http://purl.imsglobal.org/vocab/lis/v2/institution/person#Student'],
        [`${LTI}tool_platform`]: { guid: 'school-lms-guid', name: 'School LMS' },
        ...overrides,
      };
      for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
      const signer = signing.key === 'stranger' ? stranger : key;
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: signer.kid, typ: 'JWT' }).sign(signer.privateKey);
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  return platform;
}

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const hiddenFields = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
