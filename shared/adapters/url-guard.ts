import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Outbound webhook URLs must reach the public internet: never the Lambda's own network (VPC
 * ranges, the metadata service at 169.254.169.254, loopback). Applied in AWS only; the local stack
 * and tests deliver to receivers on loopback.
 *
 * The address is checked at resolution time; the request resolves the name again, so a name that
 * flips to a private address between the two (DNS rebinding) is not caught here. Endpoints are set
 * by the operator, not by users, which keeps that window out of an attacker's reach.
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
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

export class BlockedUrlError extends Error {}

/** An IPv4 address written as IPv6 (`::ffff:10.0.0.1`) is judged as the IPv4 address it is. */
function isBlockedAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export async function assertPublicHttpsUrl(raw: string): Promise<void> {
  const url = new URL(raw);
  if (url.protocol !== 'https:') throw new BlockedUrlError('webhook endpoints must use https');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  if (!addresses.length || addresses.some(isBlockedAddress)) throw new BlockedUrlError(`webhook endpoint ${url.hostname} resolves to a non-public address`);
}
