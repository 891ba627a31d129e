// Where the service may send a request on an administrator's say-so (a connector's URL, a custom model's
// baseUrl, a twin's sign-in provider and every endpoint its discovery names): http(s) only, no credentials
// in the URL, and a host whose every address is public, unless the operator lists the host in
// OUTBOUND_ALLOWED_HOSTS. `check` answers the address it checked; guarded-fetch.ts connects to exactly
// that address, so a name that resolves differently a moment later (DNS rebinding) changes nothing.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { BadRequestError } from '../http/errors.js';
import { blockedAddressReason } from './ip-ranges.js';

export const URL_NOT_ALLOWED = 'URL_NOT_ALLOWED';

/** Names of cloud metadata services, refused whatever they resolve to. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

export class OutboundRefusedError extends BadRequestError {
  constructor(
    readonly reason: string,
    code = URL_NOT_ALLOWED,
  ) {
    super(`This URL is not allowed: ${reason}`, code);
  }
}

export interface CheckedTarget {
  /** The host as written in the URL (a name, or an IP address without brackets). */
  host: string;
  /** The address to connect to: the one that was checked. */
  address: string;
  family: 4 | 6;
}

export type Resolve = (host: string) => Promise<Array<{ address: string; family: number }>>;

export interface OutboundPolicy {
  /** Resolves the URL's host and checks every address; throws OutboundRefusedError, or the resolver's error for a name that does not resolve. */
  check(url: URL): Promise<CheckedTarget>;
}

/** A host as compared: lower case, no IPv6 brackets, no trailing dot, IP addresses in the URL parser's canonical form. */
export function normalizeHost(host: string): string {
  const bare = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (!bare) return bare;
  try {
    return new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return bare;
  }
}

export function createOutboundPolicy(options: { allowedHosts: readonly string[]; resolve?: Resolve }): OutboundPolicy {
  const allowed = new Set(options.allowedHosts.map(normalizeHost).filter(Boolean));
  const resolve: Resolve = options.resolve ?? ((host) => dnsLookup(host, { all: true, verbatim: true }));

  return {
    async check(url) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefusedError('only http and https URLs may be used');
      if (url.username || url.password) throw new OutboundRefusedError('a URL may not carry a user name or password (a secret goes in its own field)');
      // The URL parser has already turned 2130706433, 0x7f.1 and 0177.0.0.1 into 127.0.0.1.
      const host = normalizeHost(url.hostname);
      const isAllowed = allowed.has(host);
      if (!isAllowed && METADATA_HOSTS.has(host)) throw new OutboundRefusedError(`${host} is a cloud metadata service`);
      const literal = isIP(host);
      const addresses = literal ? [{ address: host, family: literal }] : await resolve(host);
      if (addresses.length === 0) throw new Error(`${host} does not resolve to any address`);
      if (!isAllowed) {
        for (const { address } of addresses) {
          const reason = blockedAddressReason(address);
          if (reason) throw new OutboundRefusedError(`${host} ${literal ? 'is' : 'resolves to'} ${reason}`);
        }
      }
      const [first] = addresses;
      return { host, address: first.address, family: first.family === 6 ? 6 : 4 };
    },
  };
}

/**
 * The check of a URL an administrator saves: refuses what the guard refuses (400, `code`); a host that
 * does not resolve now is saved all the same (every request to it is checked again when it is made).
 */
export async function refuseUnlessAllowed(policy: OutboundPolicy, url: string, code = URL_NOT_ALLOWED): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OutboundRefusedError('it is not a URL', code);
  }
  try {
    await policy.check(parsed);
  } catch (error) {
    if (error instanceof OutboundRefusedError) throw code === error.code ? error : new OutboundRefusedError(error.reason, code);
  }
}

/** OUTBOUND_ALLOWED_HOSTS as a list: comma-separated hosts (names or IP addresses). */
export function parseAllowedHosts(raw: string | undefined): string[] {
  return (raw ?? '').split(',').map(normalizeHost).filter(Boolean);
}
