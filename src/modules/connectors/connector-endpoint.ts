// How this process reaches a connector's server: its URL, transport and the credential header, opened
// from the sealed credential only here, at the moment of connecting. The version names what a client
// depends on, so a client made for an older URL or credential is replaced.
import { createHash } from 'node:crypto';
import type { McpEndpoint } from '../../ai/mcp/mcp-pool.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { McpServerRow } from './connectors.tables.js';

type Reach = Pick<McpServerRow, 'id' | 'url' | 'transport' | 'credentialSealed' | 'credentialHeader'>;

export function endpointVersion(row: Reach): string {
  return createHash('sha256')
    .update(JSON.stringify([row.url, row.transport, row.credentialHeader, row.credentialSealed]))
    .digest('base64url')
    .slice(0, 16);
}

export function endpointOf(row: Reach, secrets: Pick<SecretBox, 'decrypt'>): McpEndpoint {
  const credential = row.credentialSealed ? secrets.decrypt(row.credentialSealed) : undefined;
  const headers: Record<string, string> = {};
  if (credential) headers[row.credentialHeader ?? 'Authorization'] = row.credentialHeader ? credential : `Bearer ${credential}`;
  return { id: row.id, version: endpointVersion(row), url: row.url, transport: row.transport, headers };
}

/** An error's text as a record may show it: never the credential, at most 500 characters. */
export function scrubbed(message: string, credential: string | undefined): string {
  const text = credential ? message.split(credential).join('[credential]') : message;
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}
