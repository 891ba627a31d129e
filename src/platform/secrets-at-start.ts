// The secrets a process runs with, completed at start: those given in the environment, else (the
// embedded shape; the configuration requires them with DATABASE_URL) made once and kept in
// DATA_DIR/secrets.json (mode 0600), so a restart keeps tokens and encrypted data readable.
// The configuration parser reads and writes nothing; this is the one place that writes the file.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, type Config, type StartedConfig } from '../config.js';

const SECRETS_FILE = 'secrets.json';

/** The configuration with both secrets: as given, or read from (first made into) DATA_DIR/secrets.json. */
export function withSecrets(config: Config): StartedConfig {
  const { jwtSecret, encryptionKey } = config;
  if (jwtSecret && encryptionKey) return { ...config, jwtSecret, encryptionKey };
  const stored = embeddedSecrets(config.dataDir);
  return {
    ...config,
    jwtSecret: jwtSecret ?? stored.jwtSecret,
    encryptionKey: encryptionKey ?? keyOf(stored.encryptionKey, path.join(config.dataDir, SECRETS_FILE)),
  };
}

function embeddedSecrets(dataDir: string): { jwtSecret: string; encryptionKey: string } {
  const file = path.join(dataDir, SECRETS_FILE);
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

/** A stored key, checked as the variable would be. */
function keyOf(raw: string, file: string): Buffer {
  const bytes = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (bytes.length !== 32) throw new ConfigError(`Invalid configuration: ${file} holds an encryption key that is not 32 bytes; remove it to generate new secrets`);
  return bytes;
}
