import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadConfig, settingNames } from '#lib/config.js';
import { parseTrustProxy } from '#lib/trust-proxy.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { FORWARDED_HEADERS } from '#lib/rest/graphql-client.js';
import { GRAPHQL_MAX_TOKENS } from '#lib/subgraph/query-limits.js';

/**
 * gateway.config.ts stays self-contained: Hive Gateway loads it in its own process, often in its own
 * image (docker-compose.yml's `hive` profile mounts that one file), where the platform's code is
 * absent, so it cannot import lib/. It restates what it shares with the Node gateway instead, and
 * this test holds the two in step: read from its text, as Hive Gateway would run it.
 */
const HIVE_CONFIG = readFileSync(path.join(PROJECT_ROOT, 'gateway.config.ts'), 'utf8');
const defaults = loadConfig({});

/** The string literals of the first `const <name> = [...]` or `{...}` of the file. */
function literalsOf(name: string, text = HIVE_CONFIG): string[] {
  const declaration = new RegExp(`const ${name}[^=]*=\\s*([[{][\\s\\S]*?[\\]}]);`).exec(text);
  if (!declaration) throw new Error(`gateway.config.ts declares no ${name}`);
  return [...declaration[1].matchAll(/'([^']*)'/g)].map(([, literal]) => literal);
}

/** The default a `Number(env.<setting> || <default>)` of the file falls back to. */
function numberDefaultOf(setting: string, text = HIVE_CONFIG): number {
  const read = new RegExp(`env\\.${setting} \\|\\| (\\d+)`).exec(text);
  if (!read) throw new Error(`gateway.config.ts reads no ${setting} with a default`);
  return Number(read[1]);
}

describe("Hive Gateway's configuration agrees with lib/", () => {
  it('forwards exactly the headers lib/rest/graphql-client.ts forwards', () => {
    expect(literalsOf('FORWARDED_HEADERS')).toEqual([...FORWARDED_HEADERS]);
  });

  it('reads only settings lib/config.ts knows, under the same names', () => {
    const read = new Set([...HIVE_CONFIG.matchAll(/env\.([A-Z][A-Z0-9_]*)/g)].map(([, name]) => name));
    const overrides = literalsOf('SUBGRAPH_URL_SETTINGS').filter((literal) => literal.endsWith('_URL'));
    expect([...read, ...overrides].filter((name) => !settingNames().includes(name))).toEqual([]);
    expect(overrides.sort()).toEqual(
      settingNames()
        .filter((name) => name.endsWith('_SUBGRAPH_URL'))
        .sort(),
    );
  });

  it('falls back to the defaults of lib/config.ts', () => {
    expect(numberDefaultOf('GATEWAY_PORT')).toBe(defaults.ports.gateway);
    expect(numberDefaultOf('GRAPHQL_MAX_DEPTH')).toBe(defaults.env.GRAPHQL_MAX_DEPTH);
    expect(HIVE_CONFIG).toContain(`env.WEB_URL?.trim() || '${defaults.env.WEB_URL}'`);
    expect(HIVE_CONFIG).toContain(`maxTokens: ${GRAPHQL_MAX_TOKENS},`);
  });

  it('names the address ranges TRUST_PROXY accepts', () => {
    const declaration = /const RANGES[^=]*=\s*\{([\s\S]*?)\};/.exec(HIVE_CONFIG)?.[1] ?? '';
    const ranges = [...declaration.matchAll(/^\s*(\w+):/gm)].map(([, name]) => name);
    expect(ranges.length).toBeGreaterThan(0);
    for (const name of ranges) expect(parseTrustProxy(name)).toEqual({ setting: [name] });
  });

  it('the check sees a difference (it can fail)', () => {
    const changed = HIVE_CONFIG.replace("'idempotency-key'", "'x-idempotency-key'");
    expect(literalsOf('FORWARDED_HEADERS', changed)).not.toEqual([...FORWARDED_HEADERS]);
    expect(
      numberDefaultOf('GATEWAY_PORT', HIVE_CONFIG.replace('GATEWAY_PORT || 4000', 'GATEWAY_PORT || 4001')),
    ).not.toBe(defaults.ports.gateway);
  });
});
