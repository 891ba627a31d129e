// OIDC_PROVIDERS: parsed once at start; a bad value stops the process with a reason naming it.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config.js';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dt-cfg-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const base = () => ({ DATA_DIR: dataDir });
const provider = { id: 'school', name: 'School', issuer: 'https://login.school.example', clientId: 'dt', clientSecret: 's' };

describe('OIDC_PROVIDERS', () => {
  it('is empty when unset and parsed when set', () => {
    expect(loadConfig(base()).oidcProviders).toEqual([]);
    expect(loadConfig({ ...base(), OIDC_PROVIDERS: JSON.stringify([provider]) }).oidcProviders).toEqual([provider]);
  });

  it('refuses bad JSON, a bad field, a duplicate id and a 24-hex id', () => {
    expect(() => loadConfig({ ...base(), OIDC_PROVIDERS: '[{' })).toThrow(/OIDC_PROVIDERS must be a JSON array/);
    expect(() => loadConfig({ ...base(), OIDC_PROVIDERS: JSON.stringify([{ ...provider, issuer: 'nope' }]) })).toThrow(/OIDC_PROVIDERS\.0\.issuer/);
    expect(() => loadConfig({ ...base(), OIDC_PROVIDERS: JSON.stringify([provider, provider]) })).toThrow(/"school" twice/);
    expect(() => loadConfig({ ...base(), OIDC_PROVIDERS: JSON.stringify([{ ...provider, id: 'a'.repeat(24) }]) })).toThrow(/reserved/);
  });
});
