// Which IP addresses an outbound request of the service (connectors) must never reach: loopback,
// private, carrier-grade NAT, link-local, unspecified, multicast, reserved and cloud metadata
// addresses, also when written inside an IPv6 address (IPv4-mapped, NAT64, 6to4).
import { isIP } from 'node:net';

type Range = readonly [prefix: readonly number[], bits: number, reason: string];

const METADATA = 'a cloud metadata address';

const IPV4_BLOCKED: readonly Range[] = [
  [[169, 254, 169, 254], 32, METADATA],
  [[168, 63, 129, 16], 32, METADATA], // Azure's wire server
  [[100, 100, 100, 200], 32, METADATA], // Alibaba Cloud
  [[0], 8, 'an unspecified address'],
  [[10], 8, 'a private address'],
  [[100, 64], 10, 'a private address'], // carrier-grade NAT
  [[127], 8, 'a loopback address'],
  [[169, 254], 16, 'a link-local address'],
  [[172, 16], 12, 'a private address'],
  [[192, 0, 0], 24, 'a reserved address'],
  [[192, 0, 2], 24, 'a reserved address'],
  [[192, 168], 16, 'a private address'],
  [[198, 18], 15, 'a reserved address'],
  [[198, 51, 100], 24, 'a reserved address'],
  [[203, 0, 113], 24, 'a reserved address'],
  [[224], 4, 'a multicast address'],
  [[240], 4, 'a reserved address'], // and 255.255.255.255
];

const IPV6_BLOCKED: readonly Range[] = [
  [[0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54], 128, METADATA], // AWS over IPv6
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 128, 'an unspecified address'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'a loopback address'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 96, 'a reserved address'], // IPv4-compatible (deprecated)
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, 'a private address'], // local-use NAT64
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, 'a reserved address'], // discard-only
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'a reserved address'], // documentation
  [[0xfc], 7, 'a private address'], // unique local
  [[0xfe, 0x80], 10, 'a link-local address'],
  [[0xfe, 0xc0], 10, 'a private address'], // site-local (deprecated)
  [[0xff], 8, 'a multicast address'],
];

function inRange(bytes: readonly number[], [prefix, bits]: Range): boolean {
  for (let bit = 0; bit < bits; bit += 8) {
    const width = Math.min(8, bits - bit);
    const mask = (0xff << (8 - width)) & 0xff;
    if ((bytes[bit / 8] & mask) !== ((prefix[bit / 8] ?? 0) & mask)) return false;
  }
  return true;
}

function ipv4Bytes(text: string): number[] {
  return text.split('.').map(Number);
}

/** The 16 bytes of an IPv6 address in any textual form (compressed, zone id, dotted IPv4 tail). */
export function ipv6Bytes(text: string): number[] {
  const address = text.replace(/%.*$/, '');
  const groups: number[][] = [[], []];
  const halves = address.split('::');
  halves.forEach((half, index) => {
    if (!half) return;
    for (const part of half.split(':')) {
      if (part.includes('.')) {
        const [a, b, c, d] = ipv4Bytes(part);
        groups[index].push((a << 8) | b, (c << 8) | d);
      } else {
        groups[index].push(parseInt(part, 16));
      }
    }
  });
  const missing = 8 - groups[0].length - groups[1].length;
  const words = [...groups[0], ...Array<number>(halves.length > 1 ? missing : 0).fill(0), ...groups[1]];
  return words.flatMap((word) => [word >> 8, word & 0xff]);
}

/** An IPv4 address carried inside an IPv6 one (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16). */
function embeddedIpv4(bytes: readonly number[]): number[] | undefined {
  if (inRange(bytes, [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96, ''])) return bytes.slice(12);
  if (inRange(bytes, [[0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96, ''])) return bytes.slice(12);
  if (inRange(bytes, [[0x20, 0x02], 16, ''])) return bytes.slice(2, 6);
  return undefined;
}

function blockedIpv4(bytes: readonly number[]): string | undefined {
  return IPV4_BLOCKED.find((range) => inRange(bytes, range))?.[2];
}

/** Why the address may not be reached, or undefined when it is a public address. A text that is no IP address is refused. */
export function blockedAddressReason(address: string): string | undefined {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 4) return blockedIpv4(ipv4Bytes(address));
  if (family !== 6) return 'not an IP address';
  const bytes = ipv6Bytes(address);
  const inner = embeddedIpv4(bytes);
  if (inner) return blockedIpv4(inner);
  return IPV6_BLOCKED.find((range) => inRange(bytes, range))?.[2];
}
