// The outbound guard: hostile URLs of every spelling refused, public ones let through, the allow list,
// and the guarded fetch connecting to the checked address and checking each redirect hop again.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuardedFetch } from './guarded-fetch.js';
import { blockedAddressReason } from './ip-ranges.js';
import { createOutboundPolicy, OutboundRefusedError, parseAllowedHosts, type Resolve } from './outbound-guard.js';
import { HOSTILE_URLS } from '../../../test/support/hostile-urls.js';

/** Names the tests resolve themselves (DNS is the network edge). */
const names: Record<string, string[]> = {
  'public.test': ['93.184.216.34'],
  'public6.test': ['2606:2800:220:1:248:1893:25c8:1946'],
  'mixed.test': ['93.184.216.34', '10.1.2.3'],
  'sneaky6.test': ['2606:2800:220:1:248:1893:25c8:1946', '::ffff:169.254.169.254'],
  'loopback.test': ['127.0.0.1'],
  'pinned.test': ['127.0.0.1'],
};
const resolve: Resolve = async (host) => {
  const found = names[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const strict = createOutboundPolicy({ allowedHosts: [], resolve });


describe('the outbound policy', () => {
  it.each(HOSTILE_URLS)('refuses %s with URL_NOT_ALLOWED', async (url) => {
    const refusal = await strict.check(new URL(url)).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(OutboundRefusedError);
    expect(refusal).toMatchObject({ status: 400, code: 'URL_NOT_ALLOWED' });
  });

  it('lets public addresses through, answering the address it checked', async () => {
    expect(await strict.check(new URL('https://public.test/mcp'))).toEqual({ host: 'public.test', address: '93.184.216.34', family: 4 });
    expect(await strict.check(new URL('http://public6.test/'))).toMatchObject({ address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 });
    expect(await strict.check(new URL('http://8.8.8.8/'))).toMatchObject({ address: '8.8.8.8' });
    expect(await strict.check(new URL('http://[2001:4860:4860::8888]/'))).toMatchObject({ address: '2001:4860:4860::8888', family: 6 });
    // An IPv6 address carrying a public IPv4 one is public.
    expect(await strict.check(new URL('http://[::ffff:8.8.8.8]/'))).toMatchObject({ family: 6 });
  });

  it('says why, naming the kind of address', async () => {
    await expect(strict.check(new URL('http://2130706433/'))).rejects.toThrow('This URL is not allowed: 127.0.0.1 is a loopback address');
    await expect(strict.check(new URL('http://169.254.169.254/'))).rejects.toThrow('a cloud metadata address');
    await expect(strict.check(new URL('http://mixed.test/'))).rejects.toThrow('mixed.test resolves to a private address');
  });

  it('passes on a name that does not resolve as the resolver failed (no refusal: the server is unreachable)', async () => {
    const error = await strict.check(new URL('http://nowhere.test/')).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(OutboundRefusedError);
    expect(String(error)).toContain('ENOTFOUND');
  });

  it('lets the hosts of OUTBOUND_ALLOWED_HOSTS through, in any spelling of the same address, and no other', async () => {
    const allowing = createOutboundPolicy({ allowedHosts: parseAllowedHosts(' 127.0.0.1 , Loopback.Test,[0:0::1]'), resolve });
    expect(await allowing.check(new URL('http://127.0.0.1:9000/mcp'))).toMatchObject({ address: '127.0.0.1' });
    expect(await allowing.check(new URL('http://2130706433/'))).toMatchObject({ address: '127.0.0.1' });
    expect(await allowing.check(new URL('http://loopback.test/'))).toMatchObject({ address: '127.0.0.1' });
    expect(await allowing.check(new URL('http://[::1]/'))).toMatchObject({ address: '::1', family: 6 });
    await expect(allowing.check(new URL('http://127.0.0.2/'))).rejects.toBeInstanceOf(OutboundRefusedError);
    await expect(allowing.check(new URL('http://10.0.0.1/'))).rejects.toBeInstanceOf(OutboundRefusedError);
    await expect(allowing.check(new URL('file:///etc/passwd'))).rejects.toBeInstanceOf(OutboundRefusedError);
  });

  it('classifies the edges of the ranges', () => {
    expect(blockedAddressReason('172.15.255.255')).toBeUndefined();
    expect(blockedAddressReason('172.32.0.0')).toBeUndefined();
    expect(blockedAddressReason('100.63.255.255')).toBeUndefined();
    expect(blockedAddressReason('100.128.0.0')).toBeUndefined();
    expect(blockedAddressReason('11.0.0.0')).toBeUndefined();
    expect(blockedAddressReason('fbff::1')).toBeUndefined();
    expect(blockedAddressReason('fe80::1%eth0')).toBe('a link-local address');
    expect(blockedAddressReason('febf::1')).toBe('a link-local address');
    expect(blockedAddressReason('not-an-ip')).toBe('not an IP address');
  });
});

describe('the guarded fetch', () => {
  let server: Server;
  let port = 0;
  const hits: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      hits.push(`${request.method} ${request.url} ${request.headers.authorization ?? '-'} ${request.headers.host}`);
      const [, route, target] = /^\/(\w+)(?:\?to=(.*))?$/.exec(request.url ?? '') ?? [];
      if (route === 'redirect') {
        response.writeHead(307, { location: decodeURIComponent(target) }).end();
      } else if (route === 'echo') {
        let body = '';
        request.on('data', (chunk) => (body += chunk)).on('end', () => response.end(`${request.method}:${body}`));
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('sends a request again on another connection when the kept-alive one it took was closed by the server', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const start = (listenPort: number, answer: string) =>
      new Promise<Server>((done) => {
        const own = createServer((_request, response) => response.end(answer));
        own.on('connection', (socket) => sockets.add(socket));
        own.listen(listenPort, '127.0.0.1', () => done(own));
      });
    const first = await start(0, 'first');
    const ownPort = (first.address() as AddressInfo).port;
    const guarded = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1'], resolve }));
    try {
      // Three connections kept alive and idle.
      expect(await Promise.all([1, 2, 3].map(async () => (await guarded(`http://127.0.0.1:${ownPort}/`)).text()))).toEqual(['first', 'first', 'first']);
      // The server goes away and another takes its place; the kept connections are closed under the
      // client before it has heard (same turn of the event loop).
      first.close();
      for (const socket of sockets) socket.destroy();
      const second = await start(ownPort, 'second');
      try {
        expect(await (await guarded(`http://127.0.0.1:${ownPort}/`)).text()).toBe('second');
      } finally {
        second.close();
        for (const socket of sockets) socket.destroy();
      }
      // Gone for good: the failure is the new connection's, not the closed one's.
      const down = await guarded(`http://127.0.0.1:${ownPort}/`).catch((error: NodeJS.ErrnoException) => error);
      expect(down).toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      guarded.close();
    }
  });

  it('refuses loopback unless allowed', async () => {
    const fetchStrict = createGuardedFetch(createOutboundPolicy({ allowedHosts: [], resolve }));
    await expect(fetchStrict(`http://127.0.0.1:${port}/echo`)).rejects.toMatchObject({ code: 'URL_NOT_ALLOWED' });
    fetchStrict.close();
  });

  it('connects to the address that was checked, with no second lookup (a name only the checker knows reaches the server)', async () => {
    const guarded = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['pinned.test'], resolve }));
    const response = await guarded(`http://pinned.test:${port}/echo`, { method: 'POST', body: 'hello', headers: { authorization: 'Bearer x' } });
    expect(await response.text()).toBe('POST:hello');
    expect(hits.at(-1)).toBe(`POST /echo Bearer x pinned.test:${port}`);
    guarded.close();
  });

  it.each([
    ['a metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['the decimal form of a loopback address (127.0.0.2)', 'http://2130706434/'],
    ['IPv6 loopback', 'http://[::1]/'],
    ['a private address', 'http://10.0.0.1/'],
    ['a file URL', 'file:///etc/passwd'],
  ])('refuses a redirect to %s', async (_what, target) => {
    const guarded = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1'], resolve }));
    const url = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent(target)}`;
    await expect(guarded(url)).rejects.toMatchObject({ code: 'URL_NOT_ALLOWED' });
    await expect(guarded(url, { method: 'POST', body: '{}' })).rejects.toMatchObject({ code: 'URL_NOT_ALLOWED' });
    guarded.close();
  });

  it('follows a redirect to an allowed place, dropping the credential when the origin changes; manual returns it; error refuses it', async () => {
    const guarded = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1', 'pinned.test'], resolve }), { sensitiveHeaders: ['X-Api-Key'] });
    const sameOrigin = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent('/echo')}`;
    const response = await guarded(sameOrigin, { method: 'POST', body: 'kept', headers: { authorization: 'Bearer same' } });
    expect(await response.text()).toBe('POST:kept');
    expect(hits.at(-1)).toBe(`POST /echo Bearer same 127.0.0.1:${port}`);

    const otherOrigin = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent(`http://pinned.test:${port}/echo`)}`;
    await (await guarded(otherOrigin, { headers: { authorization: 'Bearer leak' } })).text();
    expect(hits.at(-1)).toBe(`GET /echo - pinned.test:${port}`);

    const manual = await guarded(sameOrigin, { redirect: 'manual' });
    expect(manual.status).toBe(307);
    expect(manual.headers.get('location')).toBe('/echo');
    await expect(guarded(sameOrigin, { redirect: 'error' })).rejects.toThrow('refused');
    guarded.close();
  });
});
