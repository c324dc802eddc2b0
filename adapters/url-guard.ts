import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Which addresses the platform may call on someone's behalf: only the public internet, never its
 * own network (VPC ranges, the metadata service at 169.254.169.254, loopback, CGNAT), nor those
 * addresses written in another form (an IPv4 address inside IPv6: mapped `::ffff:`, NAT64
 * `64:ff9b::`, the deprecated compatible `::a.b.c.d`). Tunnelling prefixes (6to4, Teredo) carry an
 * IPv4 address the platform cannot vet, so they are refused whole. IPv6 is judged by an allow-list:
 * only global unicast (`2000::/3`) outside the special ranges below passes, so a form nobody listed
 * (the IPv4-translated `::ffff:0:a.b.c.d`, a reserved or future range) is refused, not let through.
 *
 * `assertPublicHttpsUrl` checks operator and account webhook URLs at registration (the request
 * resolves the name again later); user-supplied URLs that the platform fetches go through
 * adapters/guarded-fetch.ts, which resolves once and connects to the vetted address.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

export class BlockedUrlError extends Error {}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((g) => Number.parseInt(g, 16));
}

/** The IPv4 address an IPv6 address stands for (mapped `::ffff:`, NAT64 `64:ff9b::/96`), if any. */
function embeddedIpv4(g: number[]): string | undefined {
  const v4 = `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return v4;
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4;
  return undefined;
}

/** True for every address that is not plainly a public unicast one; anything unparsable included. */
export function isBlockedAddress(raw: string): boolean {
  const address = raw.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const groups = ipv6Groups(address);
  // Unspecified, loopback and the deprecated IPv4-compatible form `::a.b.c.d`.
  if (groups.slice(0, 6).every((x) => x === 0)) return true;
  const v4 = embeddedIpv4(groups);
  if (v4 !== undefined) return blocked.check(v4, 'ipv4');
  if ((groups[0]! & 0xe000) !== 0x2000) return true;
  return blocked.check(address, 'ipv6');
}

/** Loopback in any spelling (127.0.0.0/8, `::1`, `::ffff:127.x.y.z`): what the local stack's own receivers listen on. */
export function isLoopbackAddress(raw: string): boolean {
  const address = raw.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return address.startsWith('127.');
  if (family !== 6) return false;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 7).every((x) => x === 0) && groups[7] === 1) return true;
  const v4 = embeddedIpv4(groups);
  return v4?.startsWith('127.') === true && groups[5] === 0xffff;
}

export async function assertPublicHttpsUrl(raw: string): Promise<void> {
  const url = new URL(raw);
  if (url.protocol !== 'https:') throw new BlockedUrlError('webhook endpoints must use https');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  if (!addresses.length || addresses.some(isBlockedAddress)) throw new BlockedUrlError(`webhook endpoint ${url.hostname} resolves to a non-public address`);
}
