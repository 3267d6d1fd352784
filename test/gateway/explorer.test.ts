import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGateway, type RunningGateway } from '#gateway/gateway.js';
import { withGraphiQLLink } from '#gateway/explorer.js';
import { loadConfig } from '#lib/config.js';
import { createLogger } from '#lib/observability/logger.js';

/** The gateway alone (the explorers need no subgraph to be served), in development or production. */
async function gatewayIn(nodeEnv: 'development' | 'production'): Promise<RunningGateway> {
  // Production starts only with its decisions made (lib/production.ts).
  const decisions = {
    DEV_IDENTITY: 'allow',
    SMTP_URL: 'smtp://127.0.0.1:2525',
    CONTACTS_AUTH: 'open',
    // One gateway on embedded defaults: state kept per process is declared, not refused.
    SINGLE_INSTANCE: 'true',
  };
  const config = loadConfig({
    NODE_ENV: nodeEnv,
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    ...decisions,
  });
  return startGateway({ config, logger: createLogger(config) }, { port: 0, subgraphUrls: {} });
}

describe('explorers of the gateway', () => {
  let gateway: RunningGateway;
  let origin: string;

  beforeAll(async () => {
    gateway = await gatewayIn('development');
    origin = new URL(gateway.url).origin;
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('keeps Apollo Sandbox on GET /graphql, its text linking to GraphiQL', async () => {
    const page = await fetch(gateway.url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/embeddable-sandbox/);
    expect(html).toMatch(
      /you might be offline\.<\/p>\s*<p>GraphiQL needs no internet: it is served by this gateway at <a href="\/graphiql">/,
    );
  });

  it('links to GraphiQL at the top of the page should Apollo reword its offline notice', () => {
    expect(withGraphiQLLink('<html><body><div>Sandbox</div></body></html>')).toMatch(
      /<body>\n<p>GraphiQL needs no internet.*<a href="\/graphiql">/,
    );
  });

  it('serves GraphiQL with every script and style from the gateway itself', async () => {
    const page = await fetch(`${origin}/graphiql`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(assets).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/graphiql\/assets\/react-18\.\d+\.\d+\.js$/),
        expect.stringMatching(/^\/graphiql\/assets\/react-dom-18\.\d+\.\d+\.js$/),
        expect.stringMatching(/^\/graphiql\/assets\/graphiql-\d+\.\d+\.\d+\.js$/),
        expect.stringMatching(/^\/graphiql\/assets\/graphiql-\d+\.\d+\.\d+\.css$/),
        '/graphiql/assets/start.js',
      ]),
    );
    for (const asset of assets) {
      expect(asset.startsWith('/graphiql/')).toBe(true);
      const answer = await fetch(`${origin}${asset}`);
      expect({ asset, status: answer.status }).toEqual({ asset, status: 200 });
      expect(answer.headers.get('content-type')).toMatch(asset.endsWith('.css') ? /text\/css/ : /javascript/);
      // Versioned names: a browser keeps them for good; the page and its own script are revalidated.
      expect(answer.headers.get('cache-control')).toBe(
        /\d\.\w+$/.test(asset) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
      expect(await answer.text()).not.toMatch(/<script[^>]+src="https?:/);
    }
  });

  it('serves neither explorer in production', async () => {
    const production = await gatewayIn('production');
    try {
      const landing = await fetch(production.url, { headers: { accept: 'text/html' } });
      expect(await landing.text()).not.toMatch(/sandbox/i);
      expect((await fetch(production.url.replace('/graphql', '/graphiql'))).status).toBe(404);
    } finally {
      await production.close();
    }
  });
});
