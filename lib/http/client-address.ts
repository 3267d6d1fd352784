import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Express } from 'express';
import { parseTrustProxy } from '../trust-proxy.js';
import { carriesSubgraphToken } from './subgraph-token.js';

/**
 * Who the client is, for the limits counted per client (sign-in mail). The edge that meets the client
 * (the gateway, a REST service) reads its address, from `X-Forwarded-For` only as far as
 * `TRUST_PROXY` allows, and the gateway hands it to the subgraphs in `X-Platform-Client`, which a
 * subgraph believes only from the gateway. IPv6 clients are counted per /64: one machine commonly holds
 * a whole /64 and can pick a new address from it for every request.
 */
export const CLIENT_ADDRESS_HEADER = 'x-platform-client';

/** Applies `TRUST_PROXY` to an Express app that meets clients (the gateway, the REST services). */
export function applyTrustProxy(app: Express, trustProxy: string | undefined): void {
  const parsed = parseTrustProxy(trustProxy);
  if ('setting' in parsed && parsed.setting !== false) app.set('trust proxy', parsed.setting);
}

/** The key a client is counted under: its IPv4 address, or the /64 network of its IPv6 address. */
export function clientBucket(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (isIP(address) !== 6) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group || '0', 16).toString(16))
    .join(':')}::/64`;
}

/**
 * The client of a request to the gateway: the address a REST service deployed apart forwards in
 * `X-Platform-Client`, when it proves with the shared `SUBGRAPH_TOKEN` that it is one; else the
 * address Express found (`req.ip`, `TRUST_PROXY` applied).
 */
export function gatewayClientOf(req: IncomingMessage & { ip?: string }, tokens: readonly string[]): string | undefined {
  const forwarded = req.headers[CLIENT_ADDRESS_HEADER];
  const value = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.trim();
  return value && isIP(value) && carriesSubgraphToken(req, tokens) ? value : req.ip;
}

const isLoopback = (address: string | undefined) =>
  !!address && (address === '::1' || /^(::ffff:)?127\./.test(address));

/**
 * The client of a request to a subgraph: the address the gateway forwarded, when the request comes
 * from the gateway (it carried the shared subgraph token, which the subgraph checked before this, or,
 * with no token configured, it came over loopback from this machine); otherwise the socket's address.
 */
export function subgraphClientOf(req: IncomingMessage, tokenRequired: boolean): string {
  const forwarded = req.headers[CLIENT_ADDRESS_HEADER];
  const value = Array.isArray(forwarded) ? forwarded[0] : forwarded;
  const fromGateway = tokenRequired || isLoopback(req.socket.remoteAddress);
  return clientBucket(fromGateway && value && isIP(value.trim()) ? value.trim() : req.socket.remoteAddress);
}
