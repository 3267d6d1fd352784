import { isIP } from 'node:net';

/** Express's names for address ranges, accepted in `TRUST_PROXY` besides addresses and CIDR ranges. */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY` as Express's `trust proxy` setting: a hop count (`1`), or a comma list of addresses,
 * CIDR ranges and Express's range names (`loopback, 10.0.0.0/8`). Unset: no proxy is trusted and the
 * socket's address is the client. Returns the setting, or a problem with the value.
 */
export function parseTrustProxy(
  value: string | undefined,
): { setting: number | string[] | false } | { problem: string } {
  const text = value?.trim();
  if (!text) return { setting: false };
  if (/^\d+$/.test(text)) return { setting: Number(text) };
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = entries.filter((entry) => {
    if (RANGE_NAMES.has(entry)) return false;
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address);
    if (!family || extra !== undefined) return true;
    return bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
  });
  if (bad.length)
    return {
      problem: `TRUST_PROXY: ${bad.join(', ')} is not a hop count, an address, a CIDR range or one of ${[...RANGE_NAMES].join(', ')}`,
    };
  return { setting: entries };
}
