// The configuration contract (DESIGN.md): read once at start, validated, typed.
// A bad value stops the process with a one-line reason naming the variable.
// Secrets have no default here: the embedded shape generates them once into DATA_DIR.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

const envSchema = z.object({
  /** Port of the HTTP server; Socket.IO listens on the same port under /socket.io. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Interface to bind. */
  HOST: z.string().min(1).default('0.0.0.0'),
  /** Base URL used in mails and links. Defaults to http://localhost:$PORT. */
  PUBLIC_URL: optionalString.pipe(z.url().optional()),
  /** Embedded database, files, outbox and generated secrets live here. */
  DATA_DIR: z.string().min(1).default('./data'),
  /** PostgreSQL server; unset means PGlite inside DATA_DIR. */
  DATABASE_URL: optionalString.pipe(z.string().regex(/^postgres(ql)?:\/\//, 'must start with postgres://').optional()),
  /** Redis for the Socket.IO adapter, pub/sub and the rate-limit store; unset means one process. */
  REDIS_URL: optionalString.pipe(z.string().regex(/^rediss?:\/\//, 'must start with redis://').optional()),
  /** Token signing secret (at least 32 characters). Generated into DATA_DIR when embedded. */
  JWT_SECRET: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  /** 32-byte key for secrets at rest, as 64 hex characters or base64. Generated when embedded. */
  ENCRYPTION_KEY: optionalString,
  /** First super admin, created on a database with no user. */
  ADMIN_EMAIL: optionalString.pipe(z.email().optional()),
  ADMIN_PASSWORD: optionalString.pipe(z.string().min(8, 'must be at least 8 characters').optional()),
  /** Any OpenAI-compatible endpoint; unset means the built-in local model. */
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: optionalString.pipe(z.url().optional()),
  DEFAULT_MODEL: optionalString,
  EMBEDDING_MODEL: optionalString,
  /**
   * Price of the deployment endpoint (OPENAI_BASE_URL / OPENAI_API_KEY), in credits per 1,000 input and
   * output tokens. Unset: free (a deployment answers its people without setting up credits). Custom
   * models keep their own prices; the built-in local model is always free.
   */
  DEFAULT_PRICE_IN: z.coerce.number().min(0).max(1e6).default(0),
  DEFAULT_PRICE_OUT: z.coerce.number().min(0).max(1e6).default(0),
  /** Credits every new account starts with (a ledger row says so). */
  STARTING_CREDITS: z.coerce.number().min(0).max(1e12).default(0),
  /** Size of the embedding vectors stored for retrieval (asked of the model as `dimensions`). */
  EMBEDDING_DIMENSIONS: z.coerce.number().int().min(8).max(4000).default(256),
  /** SMTP transport, e.g. smtp://user:pass@host:587; unset means .eml files in DATA_DIR/outbox. */
  SMTP_URL: optionalString.pipe(z.string().regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://').optional()),
  MAIL_FROM: z.string().min(3).default('Digital Twin <no-reply@localhost>'),
  /**
   * Third-party sign-in providers (OpenID Connect) of the deployment, as a JSON array of
   * {id, name, issuer, clientId, clientSecret}. Unset: none.
   */
  OIDC_PROVIDERS: optionalString,
  /**
   * The chat subscription a twin's administrator may connect (device authorization grant, RFC 8628):
   * the provider's issuer (discovered), this deployment's client there, and the OpenAI-compatible API
   * the subscription's access token opens. All three or none; none: the connection's start answers 503.
   */
  SUBSCRIPTION_ISSUER: optionalString.pipe(z.url().optional()),
  SUBSCRIPTION_CLIENT_ID: optionalString,
  SUBSCRIPTION_CLIENT_SECRET: optionalString,
  SUBSCRIPTION_API_BASE: optionalString.pipe(z.url().optional()),
  /** The model a connected twin's assistants use unless they name one; default DEFAULT_MODEL. */
  SUBSCRIPTION_MODEL: optionalString,
  /** Scopes asked for; offline_access brings the refresh token that keeps the connection alive. */
  SUBSCRIPTION_SCOPE: z.string().trim().min(1).default('openid offline_access'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * The scaled shape's S3-compatible object store for uploaded files, exports and their ZIPs; unset:
   * DATA_DIR/files. Credentials come from the SDK's usual chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY).
   */
  FILES_S3_BUCKET: optionalString.pipe(
    z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a bucket name (3-63 lowercase letters, digits, dots and hyphens)').optional(),
  ),
  /** The store's URL (MinIO, another cloud); unset: AWS S3 of the region. */
  FILES_S3_ENDPOINT: optionalString.pipe(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional()),
  /** Unset: AWS_REGION, else us-east-1. */
  FILES_S3_REGION: optionalString,
  /** Path-style addressing (host/bucket/key), which MinIO and most self-hosted stores need. */
  FILES_S3_FORCE_PATH_STYLE: optionalString.pipe(z.enum(['true', 'false', '1', '0'], 'must be true or false').optional()),
  /** Largest JSON body accepted, in bytes. */
  BODY_LIMIT: z.coerce.number().int().min(1024).default(1_048_576),
  /** Largest uploaded file, in bytes. */
  UPLOAD_LIMIT: z.coerce.number().int().min(1024).default(26_214_400),
  /**
   * Which proxies may set X-Forwarded-For: unset (none, the default: the peer address counts), `true` (any:
   * only behind a proxy that overwrites the header), or a comma-separated list of addresses/CIDRs.
   */
  TRUST_PROXY: optionalString,
  /**
   * API processes sharing PORT (docs/architecture.md, "Several API processes on one port"). Above 1 a
   * primary process hands each connection to one of them; it needs DATABASE_URL and REDIS_URL.
   */
  API_PROCESSES: z.coerce.number().int().min(1).max(64).default(1),
  /** How long in-flight requests may run after SIGTERM before the process exits, in ms. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /** Interval of the SSE comment heartbeats that keep idle proxies from cutting a stream, in ms; 0 turns them off. */
  SSE_HEARTBEAT_MS: z.coerce.number().int().min(0).default(15_000),
  /** How long a chat turn waits for a decision on an approval card (expiry counts as deny). */
  APPROVAL_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(180_000),
  /**
   * How long a process may go unheard (it writes a heartbeat every third of this) before the jobs it
   * was running and the answers it was streaming are taken back by another process, in seconds.
   */
  PROCESS_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(15),
  /**
   * Test switch of the crash harness, never for a deployment: `ingest:<stage>` makes the process kill
   * itself (SIGKILL) when an ingestion reaches that stage, so a kill lands at a chosen point;
   * `database:<n>` stops the embedded database's thread after it has answered n statements.
   */
  FAULT_KILL_AT: optionalString.pipe(
    z
      .string()
      .regex(/^(ingest:(extract|chunk|sanitize|embed|finalize)|database:[1-9][0-9]*)$/, 'must be ingest:<stage> or database:<statements>')
      .optional(),
  ),
  /**
   * Bearer token the Prometheus scraper must send to /metrics (at least 16 characters). Unset: /metrics
   * is open to anyone who reaches the port, so expose it to the monitoring network only.
   */
  METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  /**
   * Hosts the URLs administrators set (connectors, custom models, twins' sign-in providers) may reach
   * although they resolve to a loopback, private or link-local address, comma-separated (names or IP
   * addresses). Unset: public addresses only. CONNECTOR_ALLOWED_HOSTS is read when this is unset.
   */
  OUTBOUND_ALLOWED_HOSTS: optionalString,
  CONNECTOR_ALLOWED_HOSTS: optionalString,
  /** How long one connector tool call (and connecting to its server) may take, in ms. */
  CONNECTOR_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
});

const oidcProviderSchema = z.object({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'ids are 1-40 lowercase letters, digits, - or _')
    .refine((id) => !/^[0-9a-f]{24}$/.test(id), 'an id of 24 hex characters is reserved for twins\' SSO providers'),
  name: z.string().min(1).max(100),
  issuer: z.url(),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1).optional(),
});
export type OidcProviderConfig = z.infer<typeof oidcProviderSchema>;

export type ProcessRole = 'all' | 'api' | 'worker';

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  jwtSecret: string;
  encryptionKey: Buffer;
  admin?: { email: string; password: string };
  model: { apiKey?: string; baseUrl?: string; defaultModel?: string; embeddingModel?: string; embeddingDimensions?: number };
  mail: { smtpUrl?: string; from: string };
  /** FILES_S3_*: files in an S3-compatible object store; unset: DATA_DIR/files. */
  filesS3?: { bucket: string; endpoint?: string; region: string; forcePathStyle: boolean };
  billing: BillingConfig;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  bodyLimit: number;
  uploadLimit: number;
  /** API processes sharing the port (1: this process serves it alone). */
  apiProcesses: number;
  shutdownGraceMs: number;
  /** Connectors (MCP servers): the call timeout. */
  connectors: { callTimeoutMs: number };
  /** The outbound guard of administrator-set URLs: the hosts exempt from it. */
  outbound: { allowedHosts: string[] };
  sseHeartbeatMs: number;
  /** APPROVAL_TIMEOUT_MS: a chat turn's wait for an approval decision. */
  approvalTimeoutMs: number;
  /** A process unheard for this long is gone: its jobs and streaming answers are taken back. */
  processTimeoutSeconds: number;
  /** FAULT_KILL_AT (crash tests only): the ingestion stage at which the process kills itself. */
  faultKillAt?: string;
  /** Bearer token /metrics requires; unset: /metrics is open. */
  metricsToken?: string;
  trustProxy: boolean | string[];
  oidcProviders: OidcProviderConfig[];
  /** Set when SUBSCRIPTION_ISSUER, SUBSCRIPTION_CLIENT_ID and SUBSCRIPTION_API_BASE are (all three or none). */
  subscription?: SubscriptionConfig;
}

/** The chat subscription twins may connect as their model source (modules/subscription). */
export interface SubscriptionConfig {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  apiBase: string;
  model?: string;
  scope: string;
}

/** What turns on the deployment endpoint cost, and what new accounts start with. */
export interface BillingConfig {
  /** Credits per 1,000 tokens on the deployment endpoint (0 and 0: free). */
  deploymentPrice: { inputPer1k: number; outputPer1k: number };
  startingCredits: number;
}

export class ConfigError extends Error {}

/** Parses the environment once. Throws ConfigError with a one-line reason naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = issue.path.join('.') || 'environment';
    throw new ConfigError(`Invalid configuration: ${variable} ${issue.message}`);
  }
  const vars = parsed.data;
  const dataDir = path.resolve(vars.DATA_DIR);

  if (vars.DATABASE_URL && (!vars.JWT_SECRET || !vars.ENCRYPTION_KEY)) {
    const missing = !vars.JWT_SECRET ? 'JWT_SECRET' : 'ENCRYPTION_KEY';
    throw new ConfigError(`Invalid configuration: ${missing} is required when DATABASE_URL is set`);
  }
  if (vars.API_PROCESSES > 1 && (!vars.DATABASE_URL || !vars.REDIS_URL)) {
    const missing = !vars.DATABASE_URL ? 'DATABASE_URL' : 'REDIS_URL';
    throw new ConfigError(`Invalid configuration: ${missing} is required when API_PROCESSES is above 1 (the processes share one database and reach each other's sockets through Redis)`);
  }
  if (Boolean(vars.ADMIN_EMAIL) !== Boolean(vars.ADMIN_PASSWORD)) {
    const missing = vars.ADMIN_EMAIL ? 'ADMIN_PASSWORD' : 'ADMIN_EMAIL';
    throw new ConfigError(`Invalid configuration: ${missing} is required when the other admin variable is set`);
  }
  const s3Extra = (['FILES_S3_ENDPOINT', 'FILES_S3_REGION', 'FILES_S3_FORCE_PATH_STYLE'] as const).find((name) => vars[name] !== undefined);
  if (s3Extra && !vars.FILES_S3_BUCKET) {
    throw new ConfigError(`Invalid configuration: FILES_S3_BUCKET is required when ${s3Extra} is set`);
  }
  const subscriptionVars = ['SUBSCRIPTION_ISSUER', 'SUBSCRIPTION_CLIENT_ID', 'SUBSCRIPTION_API_BASE'] as const;
  const subscriptionMissing = subscriptionVars.filter((name) => !vars[name]);
  if (subscriptionMissing.length > 0 && subscriptionMissing.length < subscriptionVars.length) {
    throw new ConfigError(`Invalid configuration: ${subscriptionMissing[0]} is required when the other subscription variables are set`);
  }

  const generated = vars.JWT_SECRET && vars.ENCRYPTION_KEY ? undefined : embeddedSecrets(dataDir);
  const jwtSecret = vars.JWT_SECRET ?? generated!.jwtSecret;
  const encryptionKey = parseKey(vars.ENCRYPTION_KEY ?? generated!.encryptionKey);

  return {
    port: vars.PORT,
    host: vars.HOST,
    publicUrl: (vars.PUBLIC_URL ?? `http://localhost:${vars.PORT}`).replace(/\/$/, ''),
    dataDir,
    databaseUrl: vars.DATABASE_URL,
    redisUrl: vars.REDIS_URL,
    jwtSecret,
    encryptionKey,
    admin: vars.ADMIN_EMAIL && vars.ADMIN_PASSWORD ? { email: vars.ADMIN_EMAIL.toLowerCase(), password: vars.ADMIN_PASSWORD } : undefined,
    model: {
      apiKey: vars.OPENAI_API_KEY,
      baseUrl: vars.OPENAI_BASE_URL,
      defaultModel: vars.DEFAULT_MODEL,
      embeddingModel: vars.EMBEDDING_MODEL,
      embeddingDimensions: vars.EMBEDDING_DIMENSIONS,
    },
    mail: { smtpUrl: vars.SMTP_URL, from: vars.MAIL_FROM },
    filesS3: vars.FILES_S3_BUCKET
      ? {
          bucket: vars.FILES_S3_BUCKET,
          endpoint: vars.FILES_S3_ENDPOINT,
          region: vars.FILES_S3_REGION ?? (env.AWS_REGION?.trim() || 'us-east-1'),
          forcePathStyle: vars.FILES_S3_FORCE_PATH_STYLE === 'true' || vars.FILES_S3_FORCE_PATH_STYLE === '1',
        }
      : undefined,
    billing: {
      deploymentPrice: { inputPer1k: vars.DEFAULT_PRICE_IN, outputPer1k: vars.DEFAULT_PRICE_OUT },
      startingCredits: vars.STARTING_CREDITS,
    },
    logLevel: vars.LOG_LEVEL,
    bodyLimit: vars.BODY_LIMIT,
    uploadLimit: vars.UPLOAD_LIMIT,
    apiProcesses: vars.API_PROCESSES,
    shutdownGraceMs: vars.SHUTDOWN_GRACE_MS,
    connectors: { callTimeoutMs: vars.CONNECTOR_CALL_TIMEOUT_MS },
    outbound: {
      allowedHosts: (vars.OUTBOUND_ALLOWED_HOSTS ?? vars.CONNECTOR_ALLOWED_HOSTS ?? '').split(',').map((host) => host.trim()).filter(Boolean),
    },
    sseHeartbeatMs: vars.SSE_HEARTBEAT_MS,
    approvalTimeoutMs: vars.APPROVAL_TIMEOUT_MS,
    processTimeoutSeconds: vars.PROCESS_TIMEOUT_SECONDS,
    faultKillAt: vars.FAULT_KILL_AT,
    metricsToken: vars.METRICS_TOKEN,
    trustProxy: parseTrustProxy(vars.TRUST_PROXY),
    oidcProviders: parseOidcProviders(vars.OIDC_PROVIDERS),
    subscription:
      vars.SUBSCRIPTION_ISSUER && vars.SUBSCRIPTION_CLIENT_ID && vars.SUBSCRIPTION_API_BASE
        ? {
            issuer: vars.SUBSCRIPTION_ISSUER,
            clientId: vars.SUBSCRIPTION_CLIENT_ID,
            clientSecret: vars.SUBSCRIPTION_CLIENT_SECRET,
            apiBase: vars.SUBSCRIPTION_API_BASE,
            model: vars.SUBSCRIPTION_MODEL ?? vars.DEFAULT_MODEL,
            scope: vars.SUBSCRIPTION_SCOPE,
          }
        : undefined,
  };
}

function parseOidcProviders(raw: string | undefined): OidcProviderConfig[] {
  if (!raw) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError('Invalid configuration: OIDC_PROVIDERS must be a JSON array');
  }
  const parsed = z.array(oidcProviderSchema).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`Invalid configuration: OIDC_PROVIDERS.${issue.path.join('.')} ${issue.message}`);
  }
  const ids = parsed.data.map((provider) => provider.id);
  const duplicate = ids.find((id, index) => ids.indexOf(id) !== index);
  if (duplicate) throw new ConfigError(`Invalid configuration: OIDC_PROVIDERS has the id "${duplicate}" twice`);
  return parsed.data;
}

function parseTrustProxy(raw: string | undefined): boolean | string[] {
  if (!raw || raw === 'false') return false;
  if (raw === 'true') return true;
  return raw.split(',').map((entry) => entry.trim()).filter(Boolean);
}

function parseKey(raw: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    throw new ConfigError('Invalid configuration: ENCRYPTION_KEY must be 32 bytes (64 hex characters or base64)');
  }
  return key;
}

/** Secrets of the embedded shape: made once, kept in DATA_DIR/secrets.json (mode 0600). */
function embeddedSecrets(dataDir: string): { jwtSecret: string; encryptionKey: string } {
  const file = path.join(dataDir, 'secrets.json');
  if (existsSync(file)) {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { jwtSecret?: string; encryptionKey?: string };
    if (stored.jwtSecret && stored.encryptionKey) return { jwtSecret: stored.jwtSecret, encryptionKey: stored.encryptionKey };
    throw new ConfigError(`Invalid configuration: ${file} is incomplete; remove it to generate new secrets`);
  }
  mkdirSync(dataDir, { recursive: true });
  const secrets = { jwtSecret: randomBytes(48).toString('base64url'), encryptionKey: randomBytes(32).toString('hex') };
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: 'wx' });
  return secrets;
}
