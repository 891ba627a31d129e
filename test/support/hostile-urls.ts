// The hostile URL table of the outbound guard: every spelling of a loopback, private, link-local,
// metadata or otherwise unreachable-by-rule address, other schemes, and credentials in the URL. The
// guard's unit test sends all of them; the routes' test sends those that need no resolver of its own.

/** Refused without asking DNS: IP literals in every spelling, metadata names, other schemes, credentials. */
export const HOSTILE_LITERAL_URLS = [
  'http://127.0.0.1/',
  'http://127.1/',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://0x7f000001/',
  'http://0177.0.0.1/',
  'http://017700000001/',
  'http://[::1]/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::127.0.0.1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[2002:7f00:1::]/',
  'http://0.0.0.0/',
  'http://0/',
  'http://[::]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[::ffff:169.254.169.254]/',
  'http://[fd00:ec2::254]/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://metadata.google.internal./',
  'http://168.63.129.16/',
  'http://10.0.0.1/',
  'http://10.255.255.255:8080/mcp',
  'http://172.16.0.1/',
  'http://172.31.255.255/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://100.127.255.254/',
  'http://169.254.1.1/',
  'http://[fe80::1]/',
  'http://[fc00::1]/',
  'http://[fd12:3456::1]/',
  'http://224.0.0.1/',
  'http://[ff02::1]/',
  'http://255.255.255.255/',
  'file:///etc/passwd',
  'ftp://ftp.example.com/',
  'gopher://public.test/',
  'http://user:secret@public.test/',
];

/** Names the guard's unit test resolves itself (to loopback, or to a public and a private address). */
export const HOSTILE_NAMED_URLS = [
  'http://loopback.test/',
  'http://mixed.test/',
  'http://sneaky6.test/',
];

export const HOSTILE_URLS = [...HOSTILE_LITERAL_URLS, ...HOSTILE_NAMED_URLS];
