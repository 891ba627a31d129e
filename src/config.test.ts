// The configuration contract: defaults, every bad variable named at once, rules between variables,
// a parse that touches no disk, and secrets made once by the start-up code.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { withSecrets } from './platform/secrets-at-start.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dt-config-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const reason = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const dir = tempDir();
    const config = loadConfig({ DATA_DIR: dir });
    expect(config).toMatchObject({ port: 3000, host: '0.0.0.0', publicUrl: 'http://localhost:3000', logLevel: 'info', dataDir: dir });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(config.admin).toBeUndefined();
    expect(config.apiProcesses).toBe(1);
  });

  it('generates the embedded secrets once into DATA_DIR at start and reuses them', () => {
    const dir = tempDir();
    const first = withSecrets(loadConfig({ DATA_DIR: dir }));
    const second = withSecrets(loadConfig({ DATA_DIR: dir }));
    expect(first.jwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(first.encryptionKey.length).toBe(32);
    expect(second.jwtSecret).toBe(first.jwtSecret);
    expect(second.encryptionKey.equals(first.encryptionKey)).toBe(true);
    const file = path.join(dir, 'secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain(first.jwtSecret);
  });

  it('requires the secrets when DATABASE_URL is set, and writes none', () => {
    const dir = tempDir();
    expect(reason({ DATA_DIR: dir, DATABASE_URL: 'postgres://db/x' })).toBe(
      'Invalid configuration: 2 problems\n  JWT_SECRET is required when DATABASE_URL is set\n  ENCRYPTION_KEY is required when DATABASE_URL is set',
    );
    expect(reason({ DATA_DIR: dir, DATABASE_URL: 'postgres://db/x', JWT_SECRET: 'x'.repeat(40) })).toContain('ENCRYPTION_KEY');
    expect(existsSync(path.join(dir, 'secrets.json'))).toBe(false);
  });

  it('names the variable of a bad value in one line', () => {
    const dir = tempDir();
    const cases: Array<[Record<string, string>, string]> = [
      [{ PORT: 'eighty' }, 'PORT'],
      [{ PORT: '70000' }, 'PORT'],
      [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
      [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
      [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
      [{ ADMIN_EMAIL: 'nope' , ADMIN_PASSWORD: 'long-enough' }, 'ADMIN_EMAIL'],
      [{ ADMIN_EMAIL: 'a@b.test' }, 'ADMIN_PASSWORD'],
      [{ JWT_SECRET: 'short', ENCRYPTION_KEY: 'ab'.repeat(32) }, 'JWT_SECRET'],
      [{ JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: 'too-short' }, 'ENCRYPTION_KEY'],
      [{ SMTP_URL: 'mail.example' }, 'SMTP_URL'],
    ];
    for (const [env, variable] of cases) {
      const message = reason({ DATA_DIR: dir, ...env });
      expect(message, JSON.stringify(env)).toContain(variable);
      expect(message).not.toContain('\n');
    }
  });

  it('trusts no proxy unless told which', () => {
    const dir = tempDir();
    expect(loadConfig({ DATA_DIR: dir }).trustProxy).toBe(false);
    expect(loadConfig({ DATA_DIR: dir, TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ DATA_DIR: dir, TRUST_PROXY: '10.0.0.1, 10.1.0.0/16' }).trustProxy).toEqual(['10.0.0.1', '10.1.0.0/16']);
  });

  it('accepts the scaled shape with its secrets', () => {
    const config = loadConfig({
      DATA_DIR: tempDir(),
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/app',
      REDIS_URL: 'redis://127.0.0.1:6379',
      JWT_SECRET: 'x'.repeat(40),
      ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      ADMIN_EMAIL: 'Root@Example.test',
      ADMIN_PASSWORD: 'long-password',
    });
    expect(config.encryptionKey?.equals(Buffer.alloc(32, 7))).toBe(true);
    expect(config.admin).toEqual({ email: 'root@example.test', password: 'long-password' });
  });

  it('runs several API processes only on a shared database and Redis', () => {
    const scaled = { DATA_DIR: tempDir(), JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
    const database = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/app' };
    const redis = { REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(loadConfig({ ...scaled, ...database, ...redis, API_PROCESSES: '4' }).apiProcesses).toBe(4);
    expect(reason({ ...scaled, ...database, API_PROCESSES: '2' })).toMatch(/^Invalid configuration: REDIS_URL is required when API_PROCESSES is above 1/);
    expect(reason({ ...scaled, ...redis, API_PROCESSES: '2' })).toMatch(/^Invalid configuration: DATABASE_URL is required when API_PROCESSES is above 1/);
    expect(reason({ ...scaled, API_PROCESSES: '0' })).toMatch(/^Invalid configuration: API_PROCESSES /);
    // One process needs neither.
    expect(loadConfig({ DATA_DIR: tempDir(), API_PROCESSES: '1' }).apiProcesses).toBe(1);
  });

  it('reads the chat subscription only when its issuer, client and API are all set', () => {
    const subscription = { SUBSCRIPTION_ISSUER: 'https://id.example.com', SUBSCRIPTION_CLIENT_ID: 'twin-service', SUBSCRIPTION_API_BASE: 'https://api.example.com/v1' };
    expect(loadConfig({ DATA_DIR: tempDir() }).subscription).toBeUndefined();
    expect(loadConfig({ DATA_DIR: tempDir(), ...subscription, DEFAULT_MODEL: 'house-model' }).subscription).toEqual({
      issuer: 'https://id.example.com',
      clientId: 'twin-service',
      clientSecret: undefined,
      apiBase: 'https://api.example.com/v1',
      model: 'house-model',
      scope: 'openid offline_access',
    });
    expect(loadConfig({ DATA_DIR: tempDir(), ...subscription, SUBSCRIPTION_MODEL: 'sub-model', SUBSCRIPTION_CLIENT_SECRET: 's' }).subscription).toMatchObject({ model: 'sub-model', clientSecret: 's' });
    expect(reason({ DATA_DIR: tempDir(), ...subscription, SUBSCRIPTION_CLIENT_ID: '' })).toBe('Invalid configuration: SUBSCRIPTION_CLIENT_ID is required when the other subscription variables are set');
    expect(reason({ DATA_DIR: tempDir(), ...subscription, SUBSCRIPTION_API_BASE: 'not a url' })).toMatch(/^Invalid configuration: SUBSCRIPTION_API_BASE /);
  });

  it('reports every bad variable at once, one line each, with the rules between variables', () => {
    const message = reason({
      DATA_DIR: tempDir(),
      PORT: 'eighty',
      REDIS_URL: 'http://x',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'postgres://db/x',
      JWT_SECRET: 'short',
      RT_MAX_MINUTES: '0',
    });
    const lines = message.split('\n');
    expect(lines[0]).toBe('Invalid configuration: 6 problems');
    expect(lines.slice(1).map((line) => line.trim().split(' ')[0]).sort()).toEqual(['ENCRYPTION_KEY', 'JWT_SECRET', 'LOG_LEVEL', 'PORT', 'REDIS_URL', 'RT_MAX_MINUTES']);
    expect(lines).toContain('  ENCRYPTION_KEY is required when DATABASE_URL is set');
    expect(lines).toContain('  JWT_SECRET must be at least 32 characters');
    expect(lines).toContain('  REDIS_URL must start with redis://');
  });

  it('parses without touching the disk: no DATA_DIR made, no secrets written', () => {
    const parent = tempDir();
    const dataDir = path.join(parent, 'not-yet');
    const config = loadConfig({ DATA_DIR: dataDir });
    expect(config.dataDir).toBe(dataDir);
    expect(config.jwtSecret).toBeUndefined();
    expect(config.encryptionKey).toBeUndefined();
    expect(existsSync(dataDir)).toBe(false);
    expect(readdirSync(parent)).toEqual([]);
    // The start-up code makes them, once.
    withSecrets(config);
    expect(readdirSync(dataDir)).toEqual(['secrets.json']);
  });

  it('reads the outbound guard exemptions, with CONNECTOR_ALLOWED_HOSTS as their former name', () => {
    const dir = tempDir();
    expect(loadConfig({ DATA_DIR: dir }).outbound.allowedHosts).toEqual([]);
    const given = loadConfig({ DATA_DIR: dir, OUTBOUND_ALLOWED_HOSTS: 'mcp.internal, 10.0.0.5' });
    expect(given.outbound.allowedHosts).toEqual(['mcp.internal', '10.0.0.5']);
    expect(given.connectors.allowedHosts).toEqual(['mcp.internal', '10.0.0.5']);
    const alias = loadConfig({ DATA_DIR: dir, CONNECTOR_ALLOWED_HOSTS: 'legacy.internal' });
    expect(alias.outbound.allowedHosts).toEqual(['legacy.internal']);
    expect(alias.connectors.allowedHosts).toEqual(['legacy.internal']);
    expect(loadConfig({ DATA_DIR: dir, OUTBOUND_ALLOWED_HOSTS: 'new.internal', CONNECTOR_ALLOWED_HOSTS: 'legacy.internal' }).outbound.allowedHosts).toEqual(['new.internal']);
  });

  it('reads resume, voice, transcription, voice agent and embedding settings with their documented defaults', () => {
    const dir = tempDir();
    expect(loadConfig({ DATA_DIR: dir })).toMatchObject({
      resume: { streamRetentionSeconds: 600, graceSeconds: 30, log: true },
      voice: { realtime: undefined, maxMinutes: 30, prices: { audioInPer1k: 0, audioOutPer1k: 0, textInPer1k: 0, textOutPer1k: 0 } },
      transcription: { provider: undefined, limitBytes: 25 * 1024 * 1024 },
      voiceAgent: { secret: undefined },
      embed: { sessionsPerHour: 30 },
    });
    const set = loadConfig({
      DATA_DIR: dir,
      REALTIME_BASE_URL: 'https://api.openai.com/v1',
      REALTIME_API_KEY: 'rt-key',
      REALTIME_MODEL: 'gpt-realtime',
      RT_PRICE_AUDIO_IN: '3.2',
      TRANSCRIBE_BASE_URL: 'https://stt.example/v1',
      TRANSCRIBE_MODEL: 'whisper-1',
      VOICE_AGENT_SECRET: 'v'.repeat(32),
      EMBED_SESSIONS_PER_HOUR: '5',
      STREAM_RETENTION_SECONDS: '60',
    });
    expect(set.voice.realtime).toEqual({ baseUrl: 'https://api.openai.com/v1', apiKey: 'rt-key', model: 'gpt-realtime' });
    expect(set.voice.prices.audioInPer1k).toBe(3.2);
    expect(set.transcription.provider).toEqual({ baseUrl: 'https://stt.example/v1', apiKey: undefined, model: 'whisper-1' });
    expect(set).toMatchObject({ voiceAgent: { secret: 'v'.repeat(32) }, embed: { sessionsPerHour: 5 }, resume: { streamRetentionSeconds: 60 } });
    // The frame log off is for the bench only; anything but on/off is refused by name.
    expect(loadConfig({ DATA_DIR: dir, STREAM_LOG: 'off' }).resume.log).toBe(false);
    expect(reason({ DATA_DIR: dir, STREAM_LOG: 'no' })).toContain('STREAM_LOG');
    expect(reason({ DATA_DIR: dir, REALTIME_API_KEY: 'rt-key' })).toBe('Invalid configuration: REALTIME_BASE_URL is required when REALTIME_API_KEY or REALTIME_MODEL is set');
    expect(reason({ DATA_DIR: dir, VOICE_AGENT_SECRET: 'short' })).toBe('Invalid configuration: VOICE_AGENT_SECRET must be at least 32 characters');
  });
});
