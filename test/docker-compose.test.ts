import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { loadConfig, settingNames } from '#lib/config.js';
import { PROJECT_ROOT } from '#lib/paths.js';

interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  ports?: string[];
  expose?: string[];
  profiles?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }> | string[];
}

const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, file), 'utf8');

/** Compose's `${NAME}`, `${NAME:-default}` and `${NAME:?message}`, not its `$${...}` escape. */
const VARIABLE = /(?<!\$)\$\{(\w+)(?::?([-?])([^}]*))?\}/g;

function interpolate(value: string, variables: Record<string, string>): string {
  return value.replace(VARIABLE, (_match, name: string, kind?: string, fallback?: string) => {
    const given = variables[name];
    if (given) return given;
    if (kind === '?') throw new Error(`${name} is required: ${fallback}`);
    return kind === '-' ? (fallback ?? '') : '';
  });
}

/** `KEY=value` lines of .env.example. */
function envExample(): Record<string, string> {
  const lines = read('.env.example')
    .split('\n')
    .filter((line) => /^\w+=/.test(line));
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

/** The environment names each third-party image reads itself; every other name must be a platform setting. */
const IMAGE_OWN_SETTINGS: Array<{ image: RegExp; names: RegExp }> = [
  { image: /^postgres:/, names: /^POSTGRES_(USER|PASSWORD|DB)$/ },
  { image: /^minio\/minio:/, names: /^MINIO_ROOT_(USER|PASSWORD)$/ },
  { image: /^minio\/mc:/, names: /^MC_HOST_\w+$/ },
];

describe('docker-compose.yml', () => {
  const text = read('docker-compose.yml');
  const { services } = parse(text, { merge: true }) as { services: Record<string, ComposeService> };
  const defaults = loadConfig({}).ports;
  const published: Record<string, number> = {
    gateway: defaults.gateway,
    'social-rest': defaults.socialRest,
    'surveys-rest': defaults.surveysRest,
    'contacts-rest': defaults.contactsRest,
  };
  const subgraphs: Record<string, number> = {
    'social-subgraph': defaults.socialSubgraph,
    'surveys-subgraph': defaults.surveysSubgraph,
    'contacts-subgraph': defaults.contactsSubgraph,
  };
  const parts = { ...published, ...subgraphs };
  const platformServices = Object.entries(services).filter(([, service]) => service.image === 'federated-platform');
  const secrets = {
    POSTGRES_PASSWORD: 'pg-secret',
    S3_ACCESS_KEY_ID: 'platform-key',
    S3_SECRET_ACCESS_KEY: 's3-secret-1',
    ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    SUBGRAPH_TOKEN: 'a-shared-subgraph-secret',
  };
  /** The identity decision .env.example leaves to the operator (DEV_IDENTITY or IDENTITY_*); the development issuer's keys are one instance's. */
  const decisions = { DEV_IDENTITY: 'allow', SINGLE_INSTANCE: 'true' };
  const variables = { ...envExample(), ...secrets, ...decisions };

  it('migrates in the migrate service alone, and checks the health of every part, the worker included', () => {
    for (const [name, service] of platformServices) {
      expect({ name, migrate: service.environment!.MIGRATE_ON_START }).toEqual({
        name,
        migrate: name === 'migrate' ? 'true' : 'false',
      });
      if (name !== 'migrate')
        expect({ name, healthcheck: Boolean(service.healthcheck) }).toEqual({ name, healthcheck: true });
    }
  });

  it('brings up every real part the platform uses', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'postgres',
        'redis',
        'minio',
        'minio-bucket',
        'mailpit',
        'migrate',
        'worker',
        'hive-gateway',
        ...Object.keys(parts),
      ].sort(),
    );
    expect(services.minio.image).toMatch(/^minio\/minio:RELEASE\./);
    expect(services['minio-bucket'].image).toMatch(/^minio\/mc:RELEASE\./);
    expect(services['minio-bucket'].command?.join('\n')).toContain('mc mb --ignore-existing minio/platform');
    expect(services.mailpit.image).toMatch(/^axllent\/mailpit:/);
    expect(services.mailpit.ports).toEqual(['8025:8025']);
  });

  it('runs each part from the one image, after the migrations, on PostgreSQL, Redis, MinIO and Mailpit', () => {
    expect(platformServices.map(([name]) => name).sort()).toEqual(['migrate', 'worker', ...Object.keys(parts)].sort());
    for (const [name, service] of platformServices) {
      expect(service.build).toBe('.');
      const env = service.environment!;
      expect(interpolate(env.DATABASE_URL, variables)).toBe('postgres://platform:pg-secret@postgres:5432/platform');
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      expect(env.STORAGE_URL).toBe('s3://platform');
      expect(interpolate(env.S3_ENDPOINT, variables)).toBe('http://minio:9000');
      expect(env.SMTP_URL).toBe('smtp://mailpit:1025');
      expect(env.PUBLISH_WORKER).toBe(name === 'worker' ? 'on' : 'off');
    }
    for (const name of Object.keys(parts))
      expect(services[name].command).toEqual(['node', 'dist/scripts/part.js', name]);
    expect(services.migrate.command).toEqual(['node', 'dist/scripts/migrate.js']);
    expect(services.worker.command).toEqual(['node', 'dist/scripts/worker.js']);
    for (const name of [...Object.keys(subgraphs), 'worker']) {
      expect(services[name].depends_on).toMatchObject({
        migrate: { condition: 'service_completed_successfully' },
        'minio-bucket': { condition: 'service_completed_successfully' },
      });
    }
    expect(services.gateway.depends_on).toEqual(
      Object.fromEntries(Object.keys(subgraphs).map((name) => [name, { condition: 'service_healthy' }])),
    );
  });

  it('publishes the gateway and REST ports, and no subgraph port', () => {
    for (const [name, port] of Object.entries(published)) expect(services[name].ports).toEqual([`${port}:${port}`]);
    const subgraphPorts = Object.values(subgraphs).map(String);
    for (const [name, port] of Object.entries(subgraphs)) {
      expect(services[name].ports).toBeUndefined();
      expect(services[name].expose).toEqual([String(port), '9464']);
    }
    // Every part serves GET /metrics on METRICS_PORT inside the network, published nowhere.
    for (const [name, service] of platformServices) {
      if (name === 'migrate') continue;
      expect({
        name,
        metrics: service.environment?.METRICS_PORT,
        // Loopback by default: a Prometheus in the network comes from another container.
        host: service.environment?.METRICS_HOST,
        exposed: service.expose?.includes('9464'),
      }).toEqual({ name, metrics: '9464', host: '0.0.0.0', exposed: true });
    }
    expect(
      Object.values(services)
        .flatMap((service) => service.ports ?? [])
        .filter((mapping) => mapping.endsWith(':9464')),
    ).toEqual([]);
    // No other service publishes a subgraph port either (Hive Gateway's 4080 maps to 4000 in its container).
    const containerPorts = Object.values(services).flatMap((service) =>
      (service.ports ?? []).map((mapping) => mapping.split(':').pop()!),
    );
    expect(containerPorts.filter((port) => subgraphPorts.includes(port))).toEqual([]);
  });

  it('takes every secret from .env: nothing secret is written in the file, and .env.example documents every variable', () => {
    const used = new Set([...text.matchAll(VARIABLE)].map((match) => match[1]));
    const documented = envExample();
    expect([...used].filter((name) => !(name in documented))).toEqual([]);
    expect(Object.keys(documented).filter((name) => !used.has(name))).toEqual([]);
    for (const secret of [
      'POSTGRES_PASSWORD',
      'MINIO_ROOT_USER',
      'MINIO_ROOT_PASSWORD',
      'S3_ACCESS_KEY_ID',
      'S3_SECRET_ACCESS_KEY',
      'ENCRYPTION_KEY',
      'SUBGRAPH_TOKEN',
    ]) {
      expect(documented[secret]).toBe('');
    }
    for (const [name, service] of Object.entries(services)) {
      for (const [key, value] of Object.entries(service.environment ?? {})) {
        const secretLike = /PASSWORD|SECRET|_KEY|TOKEN|^MC_HOST_|^DATABASE_URL$/.test(key);
        if (secretLike)
          expect({ service: name, key, fromEnvFile: /\$\{\w+/.test(String(value)) }).toEqual({
            service: name,
            key,
            fromEnvFile: true,
          });
      }
    }
    // A required secret left empty stops compose rather than starting with a blank one.
    expect(() =>
      interpolate(services.gateway.environment!.ENCRYPTION_KEY, { ...variables, ENCRYPTION_KEY: '' }),
    ).toThrow(/ENCRYPTION_KEY/);
    expect(read('.gitignore').split('\n')).toContain('.env');
    expect(read('.dockerignore').split('\n')).toContain('.env');
  });

  it('uses only env names the platform configuration knows, or the third-party image’s own, and they validate', () => {
    const known = new Set(settingNames());
    for (const [name, service] of Object.entries(services)) {
      const own = IMAGE_OWN_SETTINGS.find((entry) => entry.image.test(service.image ?? ''));
      const unknown = Object.keys(service.environment ?? {}).filter((key) => !known.has(key) && !own?.names.test(key));
      expect({ service: name, unknown }).toEqual({ service: name, unknown: [] });
    }
    for (const [, service] of platformServices) {
      const resolved = Object.fromEntries(
        Object.entries(service.environment!).map(([key, value]) => [key, interpolate(String(value), variables)]),
      );
      const config = loadConfig(resolved);
      expect(config.ports).toEqual(defaults);
      expect(config.storageUrl).toBe('s3://platform');
      expect(config.env.GATEWAY_URL).toBe('http://gateway:4000/graphql');
      expect(config.env.CONTACTS_SUBGRAPH_URL).toBe('http://contacts-subgraph:4003/graphql');
    }
  });

  it('starts no part until the operator decided identity; SMTP and CONTACTS_AUTH are decided in the file and .env', () => {
    const resolve = (given: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(services.gateway.environment!).map(([key, value]) => [key, interpolate(String(value), given)]),
      );
    expect(() => loadConfig(resolve({ ...envExample(), ...secrets }))).toThrow(
      /IDENTITY_JWKS_URL: set it .* or set DEV_IDENTITY=allow/,
    );
    const external = {
      IDENTITY_JWKS_URL: 'https://id.example.com/jwks.json',
      IDENTITY_ISSUER: 'https://id.example.com/',
      IDENTITY_AUDIENCE: 'platform',
    };
    expect(loadConfig(resolve({ ...envExample(), ...secrets, ...external })).warnings).toEqual([]);
    // No proxy stands before the published ports: TRUST_PROXY says so (0) rather than being left unset.
    expect(loadConfig(resolve({ ...envExample(), ...secrets, ...external })).env.TRUST_PROXY).toBe('0');
    expect(loadConfig(resolve(variables)).warnings.join('\n')).toMatch(/DEV_IDENTITY=allow/);
    expect(services.gateway.environment!.DEV_IDENTITY).toBe('${DEV_IDENTITY:-}');
    // The subgraphs run apart: beyond loopback, answering only the gateway's token (Hive Gateway sends it too).
    for (const name of ['social-subgraph', 'surveys-subgraph', 'contacts-subgraph', 'gateway']) {
      const config = loadConfig(
        Object.fromEntries(
          Object.entries(services[name].environment!).map(([key, value]) => [
            key,
            interpolate(String(value), variables),
          ]),
        ),
      );
      expect({ name, host: config.env.SUBGRAPH_HOST, token: config.env.SUBGRAPH_TOKEN }).toEqual({
        name,
        host: '0.0.0.0',
        token: ['a-shared-subgraph-secret'],
      });
    }
    expect(() =>
      interpolate(services['hive-gateway'].environment!.SUBGRAPH_TOKEN, { ...variables, SUBGRAPH_TOKEN: '' }),
    ).toThrow(/SUBGRAPH_TOKEN/);
    expect(services.gateway.environment!.CONTACTS_AUTH).toMatch(/^\$\{CONTACTS_AUTH:\?/);
  });

  it('serves the same supergraph with Hive Gateway and the project’s gateway.config.ts, in the `hive` profile', () => {
    const hive = services['hive-gateway'];
    const version = (JSON.parse(read('package.json')) as { devDependencies: Record<string, string> }).devDependencies[
      '@graphql-hive/gateway'
    ];
    expect(hive.image).toBe(`ghcr.io/graphql-hive/gateway:${version}`);
    expect(hive.profiles).toEqual(['hive']);
    expect(hive.volumes).toEqual([
      './gateway.config.ts:/gateway/gateway.config.ts:ro',
      './schema/supergraph.graphql:/gateway/supergraph.graphql:ro',
    ]);
    expect(hive.command).toEqual(['supergraph', 'supergraph.graphql']);
    expect(hive.environment).toMatchObject({
      SOCIAL_SUBGRAPH_URL: services.gateway.environment!.SOCIAL_SUBGRAPH_URL,
      SURVEYS_SUBGRAPH_URL: services.gateway.environment!.SURVEYS_SUBGRAPH_URL,
      CONTACTS_SUBGRAPH_URL: services.gateway.environment!.CONTACTS_SUBGRAPH_URL,
    });
  });

  it('starts every part that scripts/part.ts knows', () => {
    const source = read(path.join('scripts', 'part.ts'));
    // A key is quoted only where it is not an identifier (`'social-rest'`, but `gateway`).
    for (const name of Object.keys(parts)) expect(source).toMatch(new RegExp(`(^|\\s)'?${name}'?: \\(deps\\) =>`, 'm'));
  });
});
