// The configuration contract (DESIGN.md): read once at start, validated, typed. One zod schema is the
// contract: each variable is declared once with its doc comment, the rules between variables are part of
// it, and its output is the grouped Config the code uses (`Config = z.infer<typeof configSchema>`).
// Every problem is reported at once, one line per variable. Parsing reads nothing and writes nothing:
// the embedded shape's secrets are made by the start-up code (platform/secrets-at-start.ts).
import path from 'node:path';
import { z } from 'zod';

/** A variable that may be unset; blank counts as unset. */
const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));
const url = (message?: string) => optionalString.pipe(z.url(message).optional());
const startingWith = (pattern: RegExp, message: string) => optionalString.pipe(z.string().regex(pattern, message).optional());
const count = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);
const price = z.coerce.number().min(0).max(1e6).default(0);
/** A comma-separated list; unset or blank: empty. */
const list = optionalString.transform((value) => (value ?? '').split(',').map((entry) => entry.trim()).filter(Boolean));

const oidcProviderSchema = z.object({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'ids are 1-40 lowercase letters, digits, - or _')
    .refine((id) => !/^[0-9a-f]{24}$/.test(id), "an id of 24 hex characters is reserved for twins' SSO providers"),
  name: z.string().min(1).max(100),
  issuer: z.url(),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1).optional(),
});
export type OidcProviderConfig = z.infer<typeof oidcProviderSchema>;

const oidcProviders = optionalString
  .transform((raw, ctx): unknown => {
    if (!raw) return [];
    try {
      return JSON.parse(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array' });
      return z.NEVER;
    }
  })
  .pipe(
    z.array(oidcProviderSchema, 'must be a JSON array').superRefine((providers, ctx) => {
      const ids = providers.map((provider) => provider.id);
      const duplicate = ids.find((id, index) => ids.indexOf(id) !== index);
      if (duplicate) ctx.addIssue({ code: 'custom', message: `has the id "${duplicate}" twice` });
    }),
  );

/** 32 bytes, given as 64 hex characters or base64. */
const encryptionKey = optionalString.transform((raw, ctx): Buffer | undefined => {
  if (raw === undefined) return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length === 32) return key;
  ctx.addIssue({ code: 'custom', message: 'must be 32 bytes (64 hex characters or base64)' });
  return z.NEVER;
});

const trustProxy = optionalString.transform((raw): boolean | string[] => {
  if (!raw || raw === 'false') return false;
  if (raw === 'true') return true;
  return raw.split(',').map((entry) => entry.trim()).filter(Boolean);
});

const variables = z.object({
  /** Port of the HTTP server; Socket.IO listens on the same port under /socket.io. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Interface to bind. */
  HOST: z.string().min(1).default('0.0.0.0'),
  /** Base URL used in mails and links. Defaults to http://localhost:$PORT. */
  PUBLIC_URL: url(),
  /** Embedded database, files, outbox and generated secrets live here. */
  DATA_DIR: z.string().min(1).default('./data'),
  /** PostgreSQL server; unset means PGlite inside DATA_DIR. */
  DATABASE_URL: startingWith(/^postgres(ql)?:\/\//, 'must start with postgres://'),
  /** Redis for the Socket.IO adapter, pub/sub and the rate-limit store; unset means one process. */
  REDIS_URL: startingWith(/^rediss?:\/\//, 'must start with redis://'),
  /** Token signing secret (at least 32 characters); required with DATABASE_URL, else generated into DATA_DIR at start. */
  JWT_SECRET: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  /** 32-byte key for secrets at rest, as 64 hex characters or base64; required with DATABASE_URL, else generated at start. */
  ENCRYPTION_KEY: encryptionKey,
  /** First super admin's email, created on a database with no user (with ADMIN_PASSWORD). */
  ADMIN_EMAIL: optionalString.pipe(z.email().optional()),
  /** First super admin's password (at least 8 characters; with ADMIN_EMAIL). */
  ADMIN_PASSWORD: optionalString.pipe(z.string().min(8, 'must be at least 8 characters').optional()),
  /** Key of the OpenAI-compatible endpoint; unset (with OPENAI_BASE_URL) means the built-in local model. */
  OPENAI_API_KEY: optionalString,
  /** Base URL of the OpenAI-compatible endpoint. */
  OPENAI_BASE_URL: url(),
  /** The model assistants use unless they name one. */
  DEFAULT_MODEL: optionalString,
  /** The model that embeds text for retrieval. */
  EMBEDDING_MODEL: optionalString,
  /** Size of the embedding vectors stored for retrieval (asked of the model as `dimensions`). */
  EMBEDDING_DIMENSIONS: count(8, 4000, 256),
  /**
   * Price of the deployment endpoint (OPENAI_BASE_URL / OPENAI_API_KEY), in credits per 1,000 input
   * tokens. Unset: free (a deployment answers its people without setting up credits). Custom models keep
   * their own prices; the built-in local model is always free.
   */
  DEFAULT_PRICE_IN: price,
  /** The same, per 1,000 output tokens. */
  DEFAULT_PRICE_OUT: price,
  /** Credits every new account starts with (a ledger row says so). */
  STARTING_CREDITS: z.coerce.number().min(0).max(1e12).default(0),
  /** SMTP transport, e.g. smtp://user:pass@host:587; unset means .eml files in DATA_DIR/outbox. */
  SMTP_URL: startingWith(/^smtps?:\/\//, 'must start with smtp:// or smtps://'),
  /** Sender of the service's mail. */
  MAIL_FROM: z.string().min(3).default('Digital Twin <no-reply@localhost>'),
  /**
   * Third-party sign-in providers (OpenID Connect) of the deployment, as a JSON array of
   * {id, name, issuer, clientId, clientSecret}. Unset: none.
   */
  OIDC_PROVIDERS: oidcProviders,
  /**
   * The chat subscription a twin's administrator may connect (device authorization grant, RFC 8628):
   * the provider's issuer (discovered). With SUBSCRIPTION_CLIENT_ID and SUBSCRIPTION_API_BASE: all three
   * or none; none: the connection's start answers 503.
   */
  SUBSCRIPTION_ISSUER: url(),
  /** This deployment's client at the subscription's issuer. */
  SUBSCRIPTION_CLIENT_ID: optionalString,
  /** Its secret, for a confidential client. */
  SUBSCRIPTION_CLIENT_SECRET: optionalString,
  /** The OpenAI-compatible API the subscription's access token opens. */
  SUBSCRIPTION_API_BASE: url(),
  /** The model a connected twin's assistants use unless they name one; default DEFAULT_MODEL. */
  SUBSCRIPTION_MODEL: optionalString,
  /** Scopes asked for; offline_access brings the refresh token that keeps the connection alive. */
  SUBSCRIPTION_SCOPE: z.string().trim().min(1).default('openid offline_access'),
  /** pino level. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * The scaled shape's S3-compatible object store for uploaded files, exports and their ZIPs; unset:
   * DATA_DIR/files. Credentials come from the SDK's usual chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY).
   */
  FILES_S3_BUCKET: startingWith(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a bucket name (3-63 lowercase letters, digits, dots and hyphens)'),
  /** The store's URL (MinIO, another cloud); unset: AWS S3 of the region. */
  FILES_S3_ENDPOINT: optionalString.pipe(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional()),
  /** The store's region; unset: AWS_REGION, else us-east-1. */
  FILES_S3_REGION: optionalString,
  /** The SDK's own region variable, FILES_S3_REGION's fallback. */
  AWS_REGION: optionalString,
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
  TRUST_PROXY: trustProxy,
  /**
   * API processes sharing PORT (docs/architecture.md, "Several API processes on one port"). Above 1 a
   * primary process hands each connection to one of them; it needs DATABASE_URL and REDIS_URL.
   */
  API_PROCESSES: count(1, 64, 1),
  /** How long in-flight requests may run after SIGTERM before the process exits, in ms. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /** Interval of the SSE comment heartbeats that keep idle proxies from cutting a stream, in ms; 0 turns them off. */
  SSE_HEARTBEAT_MS: z.coerce.number().int().min(0).default(15_000),
  /** How long a chat turn waits for a decision on an approval card (expiry counts as deny), in ms. */
  APPROVAL_TIMEOUT_MS: count(1_000, 3_600_000, 180_000),
  /**
   * How long a process may go unheard (it writes a heartbeat every third of this) before the jobs it
   * was running and the answers it was streaming are taken back by another process, in seconds.
   */
  PROCESS_TIMEOUT_SECONDS: count(1, 3600, 15),
  /**
   * Test switch of the crash harness, never for a deployment: `ingest:<stage>` makes the process kill
   * itself (SIGKILL) when an ingestion reaches that stage, so a kill lands at a chosen point;
   * `database:<n>` stops the embedded database's thread after it has answered n statements.
   */
  FAULT_KILL_AT: startingWith(/^(ingest:(extract|chunk|sanitize|embed|finalize)|database:[1-9][0-9]*)$/, 'must be ingest:<stage> or database:<statements>'),
  /**
   * Bearer token the Prometheus scraper must send to /metrics (at least 16 characters). Unset: /metrics
   * is open to anyone who reaches the port, so expose it to the monitoring network only.
   */
  METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  /**
   * Hosts exempt from the outbound guard for every administrator-set URL (connectors, providers, ...)
   * although they resolve to a loopback, private or link-local address, comma-separated (names or IP
   * addresses). Unset: outbound requests reach public addresses only.
   */
  OUTBOUND_ALLOWED_HOSTS: list,
  /** The former name of OUTBOUND_ALLOWED_HOSTS, read when it is unset. */
  CONNECTOR_ALLOWED_HOSTS: list,
  /** How long one connector tool call (and connecting to its server) may take, in ms. */
  CONNECTOR_CALL_TIMEOUT_MS: count(100, 3_600_000, 60_000),
  /** How long an answer's frames stay resumable after it ends, in seconds. */
  STREAM_RETENTION_SECONDS: count(0, 86_400, 600),
  /** How long a `resumable` answer runs on with no reader, in seconds. */
  RESUME_GRACE_SECONDS: count(0, 3600, 30),
  /**
   * For the bench only (bench:stream with BENCH_STREAM_LOG=compare measures the answer frame log's cost
   * against this): `off` keeps no frames, so frames are still numbered but no answer can be resumed and
   * a crashed process's readers are not told. A deployment leaves it `on`.
   */
  STREAM_LOG: z.enum(['on', 'off']).default('on'),
  /** The real-time voice provider (OpenAI Realtime protocol), e.g. https://api.openai.com/v1; unset: voice answers 503 RT_NOT_CONFIGURED. */
  REALTIME_BASE_URL: url(),
  /** Its key, sent as a bearer token. */
  REALTIME_API_KEY: optionalString,
  /** The real-time model. */
  REALTIME_MODEL: optionalString,
  /** Longest voice session, in minutes. */
  RT_MAX_MINUTES: count(1, 24 * 60, 30),
  /** How long a voice session's tool call waits for the person's approval, in ms (45 s). */
  RT_APPROVAL_TIMEOUT_MS: count(1_000, 600_000, 45_000),
  /** Voice prices in credits per 1,000 tokens: audio in. */
  RT_PRICE_AUDIO_IN: price,
  /** Audio out. */
  RT_PRICE_AUDIO_OUT: price,
  /** Text in. */
  RT_PRICE_TEXT_IN: price,
  /** Text out. */
  RT_PRICE_TEXT_OUT: price,
  /** One-shot speech-to-text provider (`/audio/transcriptions`); unset: transcription answers 503 TRANSCRIBE_NOT_CONFIGURED. */
  TRANSCRIBE_BASE_URL: url(),
  /** Its key, sent as a bearer token. */
  TRANSCRIBE_API_KEY: optionalString,
  /** The transcription model. */
  TRANSCRIBE_MODEL: optionalString,
  /** Largest audio accepted for transcription, in bytes (413 above). */
  TRANSCRIBE_LIMIT: z.coerce.number().int().min(1024).default(26_214_400),
  /** HMAC key of the external voice agent's signed calls (at least 32 characters); unset: the voice-agent routes are off. */
  VOICE_AGENT_SECRET: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  /** Visitor sessions one address may open per hour on embedded twins. */
  EMBED_SESSIONS_PER_HOUR: count(1, 100_000, 30),
});
type Variables = z.infer<typeof variables>;
type VariableName = keyof Variables;

/**
 * `needed` is required as soon as any of `when` is set: one problem per missing variable, on that
 * variable. A variable already reported as bad counts as neither set nor missing (told once).
 */
function requireWith(vars: Variables, ctx: z.RefinementCtx<Variables>, needed: VariableName[], when: VariableName[], because: string): void {
  const bad = new Set(ctx.issues.map((issue) => issue.path?.[0]));
  if (!when.some((name) => !bad.has(name) && isSet(vars[name]))) return;
  for (const name of needed) {
    if (!bad.has(name) && !isSet(vars[name])) ctx.addIssue({ code: 'custom', path: [name], message: `is required when ${because}` });
  }
}

const isSet = (value: unknown): boolean => value !== undefined && value !== '' && !(typeof value === 'number' && Number.isNaN(value));

/** The rules between variables; they run even when a variable is bad, so every problem is told at once. */
function crossFieldRules(vars: Variables, ctx: z.RefinementCtx<Variables>): void {
  requireWith(vars, ctx, ['JWT_SECRET', 'ENCRYPTION_KEY'], ['DATABASE_URL'], 'DATABASE_URL is set');
  if (vars.API_PROCESSES > 1) {
    const because = "API_PROCESSES is above 1 (the processes share one database and reach each other's sockets through Redis)";
    requireWith(vars, ctx, ['DATABASE_URL', 'REDIS_URL'], ['API_PROCESSES'], because);
  }
  if (isSet(vars.ADMIN_EMAIL) !== isSet(vars.ADMIN_PASSWORD)) {
    requireWith(vars, ctx, ['ADMIN_EMAIL', 'ADMIN_PASSWORD'], ['ADMIN_EMAIL', 'ADMIN_PASSWORD'], 'the other admin variable is set');
  }
  for (const extra of ['FILES_S3_ENDPOINT', 'FILES_S3_REGION', 'FILES_S3_FORCE_PATH_STYLE'] as const) {
    if (isSet(vars[extra]) && !isSet(vars.FILES_S3_BUCKET)) requireWith(vars, ctx, ['FILES_S3_BUCKET'], [extra], `${extra} is set`);
  }
  requireWith(
    vars,
    ctx,
    ['SUBSCRIPTION_ISSUER', 'SUBSCRIPTION_CLIENT_ID', 'SUBSCRIPTION_API_BASE'],
    ['SUBSCRIPTION_ISSUER', 'SUBSCRIPTION_CLIENT_ID', 'SUBSCRIPTION_API_BASE'],
    'the other subscription variables are set',
  );
  requireWith(vars, ctx, ['REALTIME_BASE_URL'], ['REALTIME_API_KEY', 'REALTIME_MODEL'], 'REALTIME_API_KEY or REALTIME_MODEL is set');
  requireWith(vars, ctx, ['TRANSCRIBE_BASE_URL'], ['TRANSCRIBE_API_KEY', 'TRANSCRIBE_MODEL'], 'TRANSCRIBE_API_KEY or TRANSCRIBE_MODEL is set');
}

/** The grouped shape the code reads. Secrets stay unset here when not given: start-up code makes them. */
function grouped(vars: Variables) {
  const outboundHosts = vars.OUTBOUND_ALLOWED_HOSTS.length > 0 ? vars.OUTBOUND_ALLOWED_HOSTS : vars.CONNECTOR_ALLOWED_HOSTS;
  const provider = (baseUrl: string | undefined, apiKey: string | undefined, model: string | undefined) => (baseUrl ? { baseUrl, apiKey, model } : undefined);
  return {
    port: vars.PORT,
    host: vars.HOST,
    publicUrl: (vars.PUBLIC_URL ?? `http://localhost:${vars.PORT}`).replace(/\/$/, ''),
    dataDir: path.resolve(vars.DATA_DIR),
    databaseUrl: vars.DATABASE_URL,
    redisUrl: vars.REDIS_URL,
    /** Unset in the embedded shape until the start-up code generates it (platform/secrets-at-start.ts). */
    jwtSecret: vars.JWT_SECRET,
    encryptionKey: vars.ENCRYPTION_KEY,
    admin: vars.ADMIN_EMAIL && vars.ADMIN_PASSWORD ? { email: vars.ADMIN_EMAIL.toLowerCase(), password: vars.ADMIN_PASSWORD } : undefined,
    model: {
      apiKey: vars.OPENAI_API_KEY,
      baseUrl: vars.OPENAI_BASE_URL,
      defaultModel: vars.DEFAULT_MODEL,
      embeddingModel: vars.EMBEDDING_MODEL,
      embeddingDimensions: vars.EMBEDDING_DIMENSIONS,
    },
    mail: { smtpUrl: vars.SMTP_URL, from: vars.MAIL_FROM },
    /** FILES_S3_*: files in an S3-compatible object store; unset: DATA_DIR/files. */
    filesS3: vars.FILES_S3_BUCKET
      ? {
          bucket: vars.FILES_S3_BUCKET,
          endpoint: vars.FILES_S3_ENDPOINT,
          region: vars.FILES_S3_REGION ?? vars.AWS_REGION ?? 'us-east-1',
          forcePathStyle: vars.FILES_S3_FORCE_PATH_STYLE === 'true' || vars.FILES_S3_FORCE_PATH_STYLE === '1',
        }
      : undefined,
    /** What turns on the deployment endpoint cost (credits per 1,000 tokens; 0 and 0: free), and what new accounts start with. */
    billing: {
      deploymentPrice: { inputPer1k: vars.DEFAULT_PRICE_IN, outputPer1k: vars.DEFAULT_PRICE_OUT },
      startingCredits: vars.STARTING_CREDITS,
    },
    logLevel: vars.LOG_LEVEL,
    bodyLimit: vars.BODY_LIMIT,
    uploadLimit: vars.UPLOAD_LIMIT,
    /** API processes sharing the port (1: this process serves it alone). */
    apiProcesses: vars.API_PROCESSES,
    shutdownGraceMs: vars.SHUTDOWN_GRACE_MS,
    /** Hosts exempt from the outbound guard (OUTBOUND_ALLOWED_HOSTS, or its alias CONNECTOR_ALLOWED_HOSTS). */
    outbound: { allowedHosts: outboundHosts },
    /** Connectors (MCP servers): the outbound guard's exempt hosts (the same list as outbound's), and the call timeout. */
    connectors: { allowedHosts: outboundHosts, callTimeoutMs: vars.CONNECTOR_CALL_TIMEOUT_MS },
    sseHeartbeatMs: vars.SSE_HEARTBEAT_MS,
    /** APPROVAL_TIMEOUT_MS: a chat turn's wait for an approval decision. */
    approvalTimeoutMs: vars.APPROVAL_TIMEOUT_MS,
    /** A process unheard for this long is gone: its jobs and streaming answers are taken back. */
    processTimeoutSeconds: vars.PROCESS_TIMEOUT_SECONDS,
    /** FAULT_KILL_AT (crash tests only): the point at which the process kills itself. */
    faultKillAt: vars.FAULT_KILL_AT,
    /** Bearer token /metrics requires; unset: /metrics is open. */
    metricsToken: vars.METRICS_TOKEN,
    trustProxy: vars.TRUST_PROXY,
    oidcProviders: vars.OIDC_PROVIDERS,
    /** Set when SUBSCRIPTION_ISSUER, SUBSCRIPTION_CLIENT_ID and SUBSCRIPTION_API_BASE are (all three or none). */
    subscription:
      vars.SUBSCRIPTION_ISSUER && vars.SUBSCRIPTION_CLIENT_ID && vars.SUBSCRIPTION_API_BASE
        ? {
            issuer: vars.SUBSCRIPTION_ISSUER,
            clientId: vars.SUBSCRIPTION_CLIENT_ID,
            apiBase: vars.SUBSCRIPTION_API_BASE,
            scope: vars.SUBSCRIPTION_SCOPE,
            // Optional members (a public client has no secret; a deployment may name no model).
            ...(vars.SUBSCRIPTION_CLIENT_SECRET ? { clientSecret: vars.SUBSCRIPTION_CLIENT_SECRET } : {}),
            ...((vars.SUBSCRIPTION_MODEL ?? vars.DEFAULT_MODEL) ? { model: vars.SUBSCRIPTION_MODEL ?? vars.DEFAULT_MODEL } : {}),
          }
        : undefined,
    /** Resumable answers: frames kept after an answer ends, and how long a resumable answer runs with no reader. */
    resume: { streamRetentionSeconds: vars.STREAM_RETENTION_SECONDS, graceSeconds: vars.RESUME_GRACE_SECONDS, log: vars.STREAM_LOG === 'on' },
    /** Real-time voice: the provider (unset: voice off), the longest session, prices per 1,000 tokens. */
    voice: {
      realtime: provider(vars.REALTIME_BASE_URL, vars.REALTIME_API_KEY, vars.REALTIME_MODEL),
      maxMinutes: vars.RT_MAX_MINUTES,
      approvalTimeoutMs: vars.RT_APPROVAL_TIMEOUT_MS,
      prices: { audioInPer1k: vars.RT_PRICE_AUDIO_IN, audioOutPer1k: vars.RT_PRICE_AUDIO_OUT, textInPer1k: vars.RT_PRICE_TEXT_IN, textOutPer1k: vars.RT_PRICE_TEXT_OUT },
    },
    /** One-shot speech-to-text: the provider (unset: off) and the largest audio accepted. */
    transcription: { provider: provider(vars.TRANSCRIBE_BASE_URL, vars.TRANSCRIBE_API_KEY, vars.TRANSCRIBE_MODEL), limitBytes: vars.TRANSCRIBE_LIMIT },
    /** The external voice agent's HMAC key; unset: its routes are off. */
    voiceAgent: { secret: vars.VOICE_AGENT_SECRET },
    /** Embedded twins: visitor sessions one address may open per hour. */
    embed: { sessionsPerHour: vars.EMBED_SESSIONS_PER_HOUR },
  };
}

/** The whole contract: the variables, the rules between them, and the grouped output. */
export const configSchema = variables.superRefine(crossFieldRules, { when: () => true }).transform(grouped);

export type Config = z.infer<typeof configSchema>;
/** The secrets a running process has: given, or made by the start-up code in the embedded shape. */
export interface Secrets {
  jwtSecret: string;
  encryptionKey: Buffer;
}
/** The configuration a process runs with (platform/secrets-at-start.ts completes a parsed Config). */
export type StartedConfig = Config & Secrets;
export type BillingConfig = Config['billing'];
export type SubscriptionConfig = NonNullable<Config['subscription']>;
export type ProcessRole = 'all' | 'api' | 'worker';

export class ConfigError extends Error {}

/**
 * Parses the environment; reads and writes nothing else. Throws ConfigError naming every bad variable:
 * one line when there is one problem, else a first line and one line per problem.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'} ${issue.message}`);
  if (problems.length === 1) throw new ConfigError(`Invalid configuration: ${problems[0]}`);
  throw new ConfigError(`Invalid configuration: ${problems.length} problems\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
}
