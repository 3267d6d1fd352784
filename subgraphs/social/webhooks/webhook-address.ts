import { lookup as dnsLookup, promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { AppError } from '#lib/errors.js';

/** Where webhooks may point: production allows public HTTPS endpoints only. */
export interface AddressPolicy {
  production: boolean;
}

// Loopback, private, shared, link-local (cloud metadata lives at 169.254.169.254 and fd00:ec2::254),
// and the reserved ranges: nothing a user's webhook has any business reaching from inside the service.
const PRIVATE = new BlockList();
for (const [network, prefix] of [
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
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

// Link-local (metadata services) is refused in development too: no local receiver lives there.
const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');

/** Why `address` may not be called under `policy`, or null when it may. */
export function refusalOf(address: string, policy: AddressPolicy): string | null {
  const family = isIP(address);
  if (!family) return `${address} is not an IP address`;
  let plain = address;
  let type: 'ipv4' | 'ipv6' = family === 4 ? 'ipv4' : 'ipv6';
  // An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) [plain, type] = [mapped[1], 'ipv4'];
  if (LINK_LOCAL.check(plain, type)) return `${address} is a link-local (metadata) address`;
  if (policy.production && PRIVATE.check(plain, type)) return `${address} is a loopback, private or reserved address`;
  return null;
}

/** Checks a webhook URL as it is saved: a valid http(s) URL, HTTPS in production, no credentials, no private IP literal. */
export function checkWebhookUrl(raw: string | null | undefined, policy: AddressPolicy): string {
  const text = raw?.trim();
  if (!text) throw AppError.badInput('url', 'is required');
  if (text.length > 2000) throw AppError.badInput('url', 'is longer than 2000 characters');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw AppError.badInput('url', 'is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw AppError.badInput('url', 'must be an https URL');
  if (policy.production && url.protocol !== 'https:') throw AppError.badInput('url', 'must be an https URL');
  if (url.username || url.password) throw AppError.badInput('url', 'must not hold credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    const refusal = refusalOf(host, policy);
    if (refusal) throw AppError.badInput('url', `points at ${refusal}`);
  } else if (policy.production && (host === 'localhost' || host.endsWith('.localhost'))) {
    throw AppError.badInput('url', 'points at this machine');
  }
  return url.toString();
}

/**
 * `checkWebhookUrl`, and in production also what the name resolves to now. A name that does not
 * resolve yet is let through: every delivery checks the address it connects to anyway.
 */
export async function checkWebhookTarget(raw: string | null | undefined, policy: AddressPolicy): Promise<string> {
  const url = checkWebhookUrl(raw, policy);
  const host = new URL(url).hostname;
  if (!policy.production || isIP(host.replace(/^\[|\]$/g, ''))) return url;
  const addresses = await dns.lookup(host, { all: true }).catch(() => []);
  for (const { address } of addresses) {
    const refusal = refusalOf(address, policy);
    if (refusal) throw AppError.badInput('url', `resolves to ${refusal}`);
  }
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` for `http.request` that refuses addresses the policy forbids. It checks what the
 * connection will really use, at delivery time, so a name that resolved to a public address when
 * the webhook was saved and to a private one now (DNS rebinding) is still refused.
 */
export function guardedLookup(policy: AddressPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const { address } of addresses) {
        const refusal = refusalOf(address, policy);
        if (refusal)
          return callback(
            Object.assign(new Error(`refused: ${hostname} resolves to ${refusal}`), { code: 'EADDRREFUSED' }),
            [],
          );
      }
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
