import os from 'node:os';
import path from 'node:path';
import { isIP } from 'node:net';
import { z } from 'zod';
import { productionProblems, productionWarnings } from './production.js';
import { readTrustedDocuments, type TrustedDocuments } from './trusted-documents.js';
import { parseTrustProxy } from './trust-proxy.js';

/** The items of a comma list of keys or tokens (`ENCRYPTION_KEY`, `SUBGRAPH_TOKEN`), in order. */
export function listItems(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** The REST services' ports when none is configured (their OpenAPI documents name them as the local server). */
export const DEFAULT_REST_PORTS = { social: 3001, surveys: 3002, contacts: 3003 } as const;

/**
 * The whole runtime contract in one schema. Read once at start (`loadConfig`) and passed down
 * explicitly; nothing else in the code reads `process.env`.
 */
const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((value) => (value ? value : undefined));
const optionalUrl = optionalText.pipe(z.url().optional());
const commaList = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim().toLowerCase())
      .filter(Boolean),
  );

/** OTLP over HTTP only: the gRPC exporter is not installed (lib/observability/tracing.ts). */
const otlpProtocol = z
  .enum(['http/protobuf', 'http/json'], {
    message: 'must be http/protobuf or http/json (OTLP over gRPC is not supported)',
  })
  .optional();

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json`: one JSON object per line (for machines); `pretty`: pino-pretty's coloured lines (for a terminal). */
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  /** `GET /metrics` (Prometheus) of the whole process on this port; 0: not served. */
  METRICS_PORT: port(9464),
  /**
   * Where `/metrics` listens. It answers anyone who reaches it, with no credential, so loopback unless a
   * deployment opens it where its scraper comes from (`0.0.0.0` in a pod or container, behind a network policy).
   */
  METRICS_HOST: optionalText
    .transform((value) => value ?? '127.0.0.1')
    .pipe(
      z
        .string()
        .refine(
          (value) => isIP(value) !== 0 || value === 'localhost',
          'must be an IP address to listen on (127.0.0.1, 0.0.0.0, ::) or localhost',
        ),
    ),
  /**
   * OpenTelemetry's own variables, read by its SDK (lib/observability/tracing.ts); named here so deployments are
   * checked against them. Tracing is on only when an OTLP endpoint is set.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_HEADERS: optionalText,
  OTEL_SERVICE_NAME: optionalText,
  OTEL_RESOURCE_ATTRIBUTES: optionalText,
  OTEL_TRACES_SAMPLER: optionalText,
  OTEL_TRACES_SAMPLER_ARG: optionalText,
  OTEL_SDK_DISABLED: optionalText,
  HOST: z.string().default('0.0.0.0'),
  GATEWAY_PORT: port(4000),
  SOCIAL_REST_PORT: port(DEFAULT_REST_PORTS.social),
  SURVEYS_REST_PORT: port(DEFAULT_REST_PORTS.surveys),
  CONTACTS_REST_PORT: port(DEFAULT_REST_PORTS.contacts),
  SOCIAL_SUBGRAPH_PORT: port(4001),
  SURVEYS_SUBGRAPH_PORT: port(4002),
  CONTACTS_SUBGRAPH_PORT: port(4003),
  /** Where the REST adapters find the gateway when deployed apart; unset: the in-process gateway. */
  GATEWAY_URL: optionalUrl,
  /** Where the gateway finds each subgraph when deployed apart; unset: localhost and the port above. */
  SOCIAL_SUBGRAPH_URL: optionalUrl,
  SURVEYS_SUBGRAPH_URL: optionalUrl,
  CONTACTS_SUBGRAPH_URL: optionalUrl,
  DATA_DIR: z.string().default('./.data'),
  DATABASE_URL: optionalText.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
  ),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(100).default(10),
  /** Connections of each job queue's own pool (pg-boss, in the social and contacts services and the publisher) on PostgreSQL. */
  JOB_POOL_MAX: z.coerce.number().int().min(1).max(20).default(4),
  /** Seconds a start waits for PostgreSQL to respond (0 or unset: for ever, as container platforms expect). */
  DATABASE_CONNECT_TIMEOUT: z.coerce.number().int().min(0).default(0),
  REDIS_URL: optionalText.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// URL')
      .optional(),
  ),
  STORAGE_URL: optionalText.pipe(
    z
      .string()
      .regex(/^(file|s3):\/\//, 'must be a file:// or s3:// URL')
      .optional(),
  ),
  S3_ENDPOINT: optionalUrl,
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY_ID: optionalText,
  S3_SECRET_ACCESS_KEY: optionalText,
  SMTP_URL: optionalText.pipe(
    z
      .string()
      .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
      .optional(),
  ),
  IDENTITY_JWKS_URL: optionalUrl,
  IDENTITY_ISSUER: optionalText,
  IDENTITY_AUDIENCE: optionalText,
  /** `allow`: production may use the embedded development issuer (a warning at every start). */
  DEV_IDENTITY: optionalText.pipe(z.enum(['allow']).optional()),
  /** Oldest bearer token accepted, counted from its `iat`, whatever its `exp` says. */
  IDENTITY_MAX_TOKEN_AGE_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(24 * 60 * 60),
  /** Where the subgraph HTTP servers listen; beyond loopback only with SUBGRAPH_TOKEN in production. */
  SUBGRAPH_HOST: optionalText.transform((value) => value ?? '127.0.0.1'),
  /** Express's `trust proxy` for the components that receive client requests: a hop count or addresses/ranges; unset: none. */
  TRUST_PROXY: optionalText,
  /**
   * Shared secret the gateway sends to the subgraphs (`X-Subgraph-Token`); when set, subgraphs reject calls
   * without it. A comma list rotates it without downtime: the first is sent, any of them is accepted.
   */
  SUBGRAPH_TOKEN: z
    .string()
    .optional()
    .transform(listItems)
    .pipe(z.array(z.string().min(16, 'must be at least 16 characters (openssl rand -base64 32)'))),
  ATTACHMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  /**
   * Largest CSV file `POST /api/contacts/import` accepts: 512 MiB and 1,048,576 data rows, what the
   * largest CRMs take in one file (a million realistic rows are about 90 MB).
   */
  IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(512 * 1024 * 1024),
  /** Most data rows, columns, and characters in one record of a CSV import (413 / 400 above, with the limit in the message). */
  IMPORT_MAX_ROWS: z.coerce.number().int().positive().default(1_048_576),
  IMPORT_MAX_COLUMNS: z.coerce.number().int().positive().default(50),
  IMPORT_MAX_RECORD_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024),
  ASSET_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024),
  MEDIA_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(50 * 1024 * 1024),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().positive().default(12),
  GRAPHQL_MAX_COST: z.coerce.number().int().positive().default(50000),
  /** Path of the safelist manifest (GraphQL Code Generator's `persisted-documents.json`); unset: any document runs. */
  TRUSTED_DOCUMENTS: optionalText,
  AI_IMAGE_API_URL: optionalUrl,
  AI_IMAGE_API_KEY: optionalText,
  AI_IMAGE_MODEL: z.string().default('gpt-image-1'),
  /** Hosts (host[:port]) besides AI_IMAGE_API_URL's from which an image `url` the provider returns may be fetched. */
  AI_IMAGE_URL_HOSTS: commaList,
  AI_IMAGE_RATE_LIMIT: z.coerce.number().int().positive().default(10),
  AI_IMAGE_TIMEOUT_MS: z.coerce.number().int().positive().default(120000),
  ADMIN_EMAILS: commaList,
  ALLOWED_EMAIL_DOMAINS: commaList,
  MAGIC_FROM_EMAIL: z.string().default('no-reply@localhost'),
  MAGIC_LINK_BASE_URL: z.url().default('http://localhost:5173/auth/magic'),
  WEB_URL: z.url().default('http://localhost:5173'),
  /** Browser origins allowed to call the gateway and the REST services with credentials; unset: WEB_URL's origin. */
  CORS_ORIGINS: optionalText,
  ENCRYPTION_KEY: optionalText,
  CONTACTS_AUTH: z.enum(['open', 'required']).default('open'),
  /**
   * `true`: exactly one instance of each part runs, so production may keep state per process (embedded
   * database, file storage, per-process rate limits, a key in DATA_DIR); a warning names each at every start.
   */
  SINGLE_INSTANCE: optionalText.pipe(z.enum(['true', 'false']).optional()),
  /** Public base address of the social REST service, used in signed upload URLs and OAuth callbacks. */
  SOCIAL_PUBLIC_URL: optionalUrl,
  SURVEYS_PUBLIC_URL: optionalUrl,
  /** Deadline of one call to a social platform; a publish that hits it ends failed, never posted again. */
  PLATFORM_TIMEOUT_MS: z.coerce.number().int().positive().default(15000),
  /**
   * `false`: no part migrates its database on start; each refuses a database behind its code, and
   * migrations run in one step of their own (`npm run migrate`, the Kubernetes Job) before a release's parts.
   */
  MIGRATE_ON_START: z.enum(['true', 'false']).default('true'),
  /** `false`: every operation takes the gateway's full path; `true`: fixed ones may run straight on their subgraph (gateway/short-path.ts). */
  GATEWAY_SHORT_PATH: z.enum(['true', 'false']).default('true'),
  /** `off`: this process serves the API only and leaves publishing to `npm run worker` processes. */
  PUBLISH_WORKER: z.enum(['on', 'off']).default('on'),
  /** `off`: this process queues contacts imports but leaves running them to the other instances (or processes) that have it on. */
  IMPORT_WORKER: z.enum(['on', 'off']).default('on'),
  /** Worker processes of `npm start` on PostgreSQL (default: one per CPU); embedded PGlite always runs one. */
  WEB_CONCURRENCY: z.coerce.number().int().min(1).max(64).optional(),
});

export type Env = z.infer<typeof EnvSchema>;

/** OAuth client settings of one social platform, from `<PLATFORM>_CLIENT_ID` and friends. */
export interface PlatformCredentials {
  clientId: string;
  clientSecret?: string;
  baseUrl?: string;
}

export interface Config {
  env: Env;
  isProduction: boolean;
  /**
   * How log lines are written: `LOG_FORMAT`, else readable lines on a terminal in development (a person
   * reads them) and JSON everywhere else (a log shipper reads them).
   */
  logFormat: 'json' | 'pretty';
  dataDir: string;
  ports: {
    gateway: number;
    socialRest: number;
    surveysRest: number;
    contactsRest: number;
    socialSubgraph: number;
    surveysSubgraph: number;
    contactsSubgraph: number;
  };
  storageUrl: string;
  /**
   * Public base address (no trailing slash) of the REST services that hand out links to themselves:
   * signed storage URLs of the local file store, the OAuth callback. Behind a proxy, `*_PUBLIC_URL`.
   */
  publicUrls: { social: string; surveys: string };
  /** Whether the surveys session cookie carries `Secure`: in production, and wherever it is served over HTTPS. */
  surveysCookieSecure: boolean;
  platforms: Record<string, PlatformCredentials>;
  /** Origins (`scheme://host[:port]`) whose pages may call the gateway and the REST services with credentials. */
  corsOrigins: string[];
  /** Allowed but unsafe choices, logged as warnings at every start (`DEV_IDENTITY=allow` in production). */
  warnings: string[];
  /** How many worker processes `npm start` runs, each the whole platform: 1 on PGlite, whose files one process opens. */
  workers: number;
  /** The only documents the gateway runs (`TRUSTED_DOCUMENTS`), read and checked at start; undefined: any. */
  trustedDocuments?: TrustedDocuments;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const KNOWN_PLATFORMS = ['mastodon', 'x'] as const;
const PLATFORM_SETTINGS = ['CLIENT_ID', 'CLIENT_SECRET', 'BASE_URL'] as const;
const platformSetting = (platform: string, setting: (typeof PLATFORM_SETTINGS)[number]) =>
  `${platform.toUpperCase()}_${setting}`;

function readPlatforms(env: Record<string, string | undefined>): Record<string, PlatformCredentials> {
  const platforms: Record<string, PlatformCredentials> = {};
  for (const platform of KNOWN_PLATFORMS) {
    const clientId = env[platformSetting(platform, 'CLIENT_ID')]?.trim();
    if (!clientId) continue;
    platforms[platform] = {
      clientId,
      clientSecret: env[platformSetting(platform, 'CLIENT_SECRET')]?.trim() || undefined,
      baseUrl: env[platformSetting(platform, 'BASE_URL')]?.trim() || undefined,
    };
  }
  return platforms;
}

/**
 * `CORS_ORIGINS` (or `WEB_URL`) as origins. Browsers send credentials, so `*` is rejected: each
 * origin must be listed, and is compared exactly with the `Origin` header a browser sends.
 */
function readCorsOrigins(list: string, problems: string[]): string[] {
  const origins: string[] = [];
  for (const item of list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)) {
    if (item.includes('*')) {
      problems.push(`CORS_ORIGINS: "${item}": wildcards are not allowed with credentials; name each origin`);
      continue;
    }
    const url = URL.canParse(item) ? new URL(item) : undefined;
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.hash) {
      problems.push(`CORS_ORIGINS: "${item}" is not an origin (scheme://host[:port], no path)`);
      continue;
    }
    origins.push(url.origin);
  }
  return origins;
}

/** Every environment variable the platform reads; deployment files (compose, Kubernetes) are checked against it. */
export function settingNames(): string[] {
  const platformNames = KNOWN_PLATFORMS.flatMap((platform) =>
    PLATFORM_SETTINGS.map((setting) => platformSetting(platform, setting)),
  );
  return [...Object.keys(EnvSchema.shape), ...platformNames];
}

export function loadConfig(
  source: Record<string, string | undefined> = process.env,
  onTerminal = Boolean(process.stdout.isTTY),
): Config {
  const parsed = EnvSchema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const env = parsed.data;
  const problems: string[] = [];
  if (env.IDENTITY_JWKS_URL && (!env.IDENTITY_ISSUER || !env.IDENTITY_AUDIENCE)) {
    problems.push('IDENTITY_ISSUER and IDENTITY_AUDIENCE are required when IDENTITY_JWKS_URL is set');
  }
  if (env.STORAGE_URL?.startsWith('s3://') && (!env.S3_ACCESS_KEY_ID || !env.S3_SECRET_ACCESS_KEY)) {
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required when STORAGE_URL is s3://');
  }
  if (listItems(env.ENCRYPTION_KEY).some((key) => Buffer.from(key, 'base64').length !== 32)) {
    problems.push('ENCRYPTION_KEY must be 32 bytes, base64 encoded (or a comma list of such keys, the newest first)');
  }
  const trustProxy = parseTrustProxy(env.TRUST_PROXY);
  if ('problem' in trustProxy) problems.push(trustProxy.problem);
  const corsOrigins = readCorsOrigins(env.CORS_ORIGINS ?? new URL(env.WEB_URL).origin, problems);
  const safelist = env.TRUSTED_DOCUMENTS ? readTrustedDocuments(env.TRUSTED_DOCUMENTS) : undefined;
  if (safelist && 'problems' in safelist) problems.push(...safelist.problems);
  const production = { ...env, CONTACTS_AUTH_GIVEN: Boolean(source.CONTACTS_AUTH?.trim()) };
  if (env.NODE_ENV === 'production') problems.push(...productionProblems(production));
  if (problems.length) throw new ConfigError(problems);

  const dataDir = path.resolve(env.DATA_DIR);
  const publicUrl = (configured: string | undefined, port: number) =>
    (configured ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const publicUrls = {
    social: publicUrl(env.SOCIAL_PUBLIC_URL, env.SOCIAL_REST_PORT),
    surveys: publicUrl(env.SURVEYS_PUBLIC_URL, env.SURVEYS_REST_PORT),
  };
  return {
    env,
    isProduction: env.NODE_ENV === 'production',
    logFormat: env.LOG_FORMAT ?? (env.NODE_ENV !== 'production' && onTerminal ? 'pretty' : 'json'),
    dataDir,
    workers: env.DATABASE_URL ? (env.WEB_CONCURRENCY ?? os.availableParallelism()) : 1,
    ports: {
      gateway: env.GATEWAY_PORT,
      socialRest: env.SOCIAL_REST_PORT,
      surveysRest: env.SURVEYS_REST_PORT,
      contactsRest: env.CONTACTS_REST_PORT,
      socialSubgraph: env.SOCIAL_SUBGRAPH_PORT,
      surveysSubgraph: env.SURVEYS_SUBGRAPH_PORT,
      contactsSubgraph: env.CONTACTS_SUBGRAPH_PORT,
    },
    storageUrl: env.STORAGE_URL ?? `file://${path.join(dataDir, 'storage')}`,
    publicUrls,
    surveysCookieSecure: env.NODE_ENV === 'production' || publicUrls.surveys.startsWith('https:'),
    platforms: readPlatforms(source),
    corsOrigins,
    warnings: env.NODE_ENV === 'production' ? productionWarnings(production) : [],
    trustedDocuments: safelist && 'documents' in safelist ? safelist.documents : undefined,
  };
}
