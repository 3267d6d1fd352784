import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { loadConfig } from '../lib/config.js';
import { PROJECT_ROOT } from '../lib/paths.js';

interface ComposeService {
  command?: string[];
  ports?: string[];
  environment?: Record<string, string>;
}

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(path.join(PROJECT_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, ComposeService>;
  };
  const defaults = loadConfig({}).ports;
  const parts: Record<string, number> = {
    gateway: defaults.gateway,
    'social-rest': defaults.socialRest,
    'surveys-rest': defaults.surveysRest,
    'contacts-rest': defaults.contactsRest,
    'social-subgraph': defaults.socialSubgraph,
    'surveys-subgraph': defaults.surveysSubgraph,
    'contacts-subgraph': defaults.contactsSubgraph,
  };

  it('runs every part on PostgreSQL at the runtime contract ports', () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['postgres', 'redis', ...Object.keys(parts)]));
    for (const [name, port] of Object.entries(parts)) {
      const service = compose.services[name];
      expect(service.command).toEqual(['node', 'dist/scripts/part.js', name]);
      expect(service.ports).toEqual([`${port}:${port}`]);
      expect(service.environment?.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
    }
  });

  it('uses only env names the configuration knows, and they validate', () => {
    const env = compose.services.gateway.environment!;
    const resolved = Object.fromEntries(Object.entries(env).map(([key, value]) => [key, String(value).replace(/\$\{[^}]*:-([^}]*)\}/, '$1')]));
    const config = loadConfig(resolved);
    expect(Object.keys(env).every((key) => key in config.env)).toBe(true);
    expect(config.ports).toEqual(defaults);
    expect(config.env.GATEWAY_URL).toBe('http://gateway:4000/graphql');
    expect(config.env.CONTACTS_SUBGRAPH_URL).toBe('http://contacts-subgraph:4003/graphql');
  });

  it('starts every part that scripts/part.ts knows', () => {
    const source = readFileSync(path.join(PROJECT_ROOT, 'scripts', 'part.ts'), 'utf8');
    for (const name of Object.keys(parts)) expect(source).toMatch(new RegExp(`'${name}': \\(deps\\) =>`));
  });
});
