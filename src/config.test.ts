// The configuration contract: defaults, one-line reasons naming the variable, secrets made once.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

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

  it('generates the embedded secrets once into DATA_DIR and reuses them', () => {
    const dir = tempDir();
    const first = loadConfig({ DATA_DIR: dir });
    const second = loadConfig({ DATA_DIR: dir });
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
      'Invalid configuration: JWT_SECRET is required when DATABASE_URL is set',
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
    expect(config.encryptionKey.equals(Buffer.alloc(32, 7))).toBe(true);
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
});
