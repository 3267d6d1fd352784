import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '#lib/config.js';

describe('loadConfig', () => {
  it('fills the runtime contract defaults', () => {
    const config = loadConfig({});
    expect(config.ports).toEqual({
      gateway: 4000,
      socialRest: 3001,
      surveysRest: 3002,
      contactsRest: 3003,
      socialSubgraph: 4001,
      surveysSubgraph: 4002,
      contactsSubgraph: 4003,
    });
    expect(config.env.ATTACHMENT_MAX_BYTES).toBe(10 * 1024 * 1024);
    expect(config.env.AI_IMAGE_RATE_LIMIT).toBe(10);
    expect(config.env.CONTACTS_AUTH).toBe('open');
    expect(config.env.WEB_URL).toBe('http://localhost:5173');
    expect(config.storageUrl).toMatch(/^file:\/\/.*\.data\/storage$/);
    expect(config.platforms).toEqual({});
    expect(config.publicUrls).toEqual({ social: 'http://localhost:3001', surveys: 'http://localhost:3002' });
    expect(config.surveysCookieSecure).toBe(false);
  });

  it('derives the public URLs and the Secure rule of the session cookie once', () => {
    const behindProxy = loadConfig({
      SOCIAL_PUBLIC_URL: 'https://social.example.com/',
      SURVEYS_PUBLIC_URL: 'https://surveys.example.com//',
      SURVEYS_REST_PORT: '8002',
    });
    expect(behindProxy.publicUrls).toEqual({
      social: 'https://social.example.com',
      surveys: 'https://surveys.example.com',
    });
    expect(behindProxy.surveysCookieSecure).toBe(true);
    expect(loadConfig({ SURVEYS_REST_PORT: '8002' }).publicUrls.surveys).toBe('http://localhost:8002');
    expect(
      loadConfig({
        NODE_ENV: 'production',
        DEV_IDENTITY: 'allow',
        SMTP_URL: 'smtp://mail.example.com',
        CONTACTS_AUTH: 'open',
        SINGLE_INSTANCE: 'true',
      }).surveysCookieSecure,
    ).toBe(true);
  });

  it('reads overrides, comma lists and platform credentials', () => {
    const config = loadConfig({
      GATEWAY_PORT: '5000',
      ADMIN_EMAILS: 'Boss@Example.com, ops@example.com',
      MASTODON_CLIENT_ID: 'abc',
      MASTODON_BASE_URL: 'http://127.0.0.1:9999',
      DATABASE_URL: 'postgres://u@h:5432/db',
    });
    expect(config.ports.gateway).toBe(5000);
    expect(config.env.ADMIN_EMAILS).toEqual(['boss@example.com', 'ops@example.com']);
    expect(config.platforms.mastodon).toEqual({
      clientId: 'abc',
      clientSecret: undefined,
      baseUrl: 'http://127.0.0.1:9999',
    });
    expect(config.env.DATABASE_URL).toBe('postgres://u@h:5432/db');
  });

  it('fails with every problem named at once', () => {
    let error: unknown;
    try {
      loadConfig({ GATEWAY_PORT: 'eighty', CONTACTS_AUTH: 'sometimes', DATABASE_URL: 'mysql://x' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('GATEWAY_PORT');
    expect(message).toContain('CONTACTS_AUTH');
    expect(message).toContain('DATABASE_URL');
  });

  it('checks settings that depend on each other', () => {
    expect(() => loadConfig({ IDENTITY_JWKS_URL: 'http://127.0.0.1/jwks' })).toThrow(/IDENTITY_ISSUER/);
    expect(() => loadConfig({ STORAGE_URL: 's3://bucket' })).toThrow(/S3_ACCESS_KEY_ID/);
    expect(() => loadConfig({ ENCRYPTION_KEY: 'short' })).toThrow(/ENCRYPTION_KEY/);
  });

  it('takes OTLP over HTTP only, protobuf or JSON: the gRPC exporter is not installed', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).env.OTEL_EXPORTER_OTLP_PROTOCOL).toBe('http/json');
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL.*OTLP over gRPC is not supported/,
    );
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/,
    );
  });

  it("allows WEB_URL's origin by default and named origins from CORS_ORIGINS, never a wildcard", () => {
    expect(loadConfig({}).corsOrigins).toEqual(['http://localhost:5173']);
    expect(loadConfig({ WEB_URL: 'https://app.example.com/welcome' }).corsOrigins).toEqual(['https://app.example.com']);
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com/, http://localhost:5173' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(() => loadConfig({ CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS: "\*": wildcards are not allowed/);
    expect(() => loadConfig({ CORS_ORIGINS: 'https://*.example.com' })).toThrow(/wildcards/);
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example.com/path' })).toThrow(/is not an origin/);
    expect(() => loadConfig({ CORS_ORIGINS: 'app.example.com' })).toThrow(/is not an origin/);
  });
});
