import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '#lib/config.js';
import { createLogger, type Logger } from '#lib/observability/logger.js';
import { LogCollector } from '#test/support/logs.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describe('logs that follow one request', () => {
  let platform: TestPlatform;
  const logs = new LogCollector();

  beforeAll(async () => {
    platform = await startTestPlatform({ LOG_LEVEL: 'info' }, { logStream: logs });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('sends the request id the REST service made down to the gateway, in two lines a request', async () => {
    const answer = await rest('GET', `${platform.urls.contactsRest}/api/contacts`);
    expect(answer.status).toBe(200);
    const made = answer.headers.get('x-request-id');
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    const seen = logs.lines
      .filter((line) => line.req?.id === made || line.requestId === made)
      .map((line) => line.component);
    // At info, two lines: the REST request and the gateway's operation; the in-process subgraph's own
    // line is at debug (test/gateway/local-subgraphs.test.ts reads it).
    expect(seen.sort()).toEqual(['contacts-rest', 'gateway']);
  });

  it('names five fields of a request and two of its answer, never a header, a cookie or a query value', async () => {
    const secret = 'do-not-log-8d1f0c';
    const answer = await rest('GET', `${platform.urls.contactsRest}/api/contacts?search=${secret}`, undefined, {
      authorization: `Bearer ${secret}`,
      cookie: `session=${secret}`,
      'x-api-key': secret,
      'x-some-new-header': secret,
      'x-request-id': 'log-allowlist-1',
      'user-agent': 'log-test',
    });
    // (The made-up bearer token is refused: the line names that answer.)
    const line = logs.lines.find((entry) => entry.req?.id === 'log-allowlist-1');
    expect(line?.req).toEqual({
      id: 'log-allowlist-1',
      method: 'GET',
      url: '/api/contacts?search=[redacted]',
      remoteAddress: expect.any(String),
      userAgent: 'log-test',
    });
    expect(line?.res?.statusCode).toBe(answer.status);
    expect(Object.keys(line?.res ?? {}).filter((key) => key !== 'contentLength')).toEqual(['statusCode']);
    expect(JSON.stringify(logs.lines)).not.toContain(secret);
  });

  it('writes one line per operation for the in-process gateway: name, duration, outcome, request id', async () => {
    const answer = await rest(
      'POST',
      `${platform.urls.contactsRest}/api/contacts`,
      { lastName: 'Nobody' },
      { 'x-request-id': 'log-op-1' },
    );
    expect(answer.status).toBe(400);
    const lines = logs.lines.filter((line) => line.component === 'gateway' && line.requestId === 'log-op-1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'graphql operation',
      operation: 'CreateContact',
      outcome: 'BAD_USER_INPUT',
      level: 40,
    });
    expect(typeof lines[0]?.durationMs).toBe('number');
  });

  it('keeps every message on one line (Apollo Gateway writes some with newlines and tabs)', () => {
    expect(
      logs.lines.some(
        (line) => typeof line.msg === 'string' && line.msg.startsWith('Gateway successfully loaded schema'),
      ),
    ).toBe(true);
    for (const line of logs.lines) if (typeof line.msg === 'string') expect(line.msg).not.toMatch(/[\n\t]/);
  });
});

describe('LOG_FORMAT', () => {
  const written = async (
    format: string,
    log = (logger: Logger) => logger.info({ requestId: 'abc' }, 'hello there'),
  ) => {
    let text = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        text += chunk.toString();
        callback();
      },
    });
    const logger = createLogger(loadConfig({ LOG_FORMAT: format }), sink);
    log(logger);
    logger.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    return text;
  };

  it('json (the default): one JSON object per line', async () => {
    const text = await written('json');
    expect(JSON.parse(text.trim())).toMatchObject({ level: 30, msg: 'hello there', requestId: 'abc' });
  });

  it('pretty: pino-pretty lines for a terminal', async () => {
    const text = await written('pretty');
    expect(text).toContain('INFO');
    expect(text).toContain('hello there');
    expect(text).toContain('requestId: "abc"');
    expect(() => JSON.parse(text.trim())).toThrow();
  });

  it('states an error by its type, message, code and cause, never its stack or the SQL of a statement', async () => {
    const cause = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
      sql: 'insert into contact (email) values ($1)',
      parameters: ['someone@example.com'],
    });
    const error = Object.assign(new Error('The contact could not be saved', { cause }), { code: 'CONFLICT' });
    const text = await written('json', (logger) => logger.error({ err: error }, 'save failed'));
    const { err } = JSON.parse(text.trim()) as { err: Record<string, unknown> };
    expect(err).toMatchObject({
      type: 'Error',
      code: 'CONFLICT',
      message: expect.stringContaining('could not be saved'),
    });
    expect(JSON.stringify(err)).toContain('23505');
    for (const leak of ['stack', 'at ', '.ts:', '.js:', 'insert into', 'someone@example.com'])
      expect(JSON.stringify(err)).not.toContain(leak);
  });

  it('refuses another value', () => {
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT/);
  });

  it('unset: readable lines on a terminal in development, JSON for a pipe and in production', () => {
    const production = {
      NODE_ENV: 'production',
      DEV_IDENTITY: 'allow',
      SMTP_URL: 'smtp://127.0.0.1:25',
      CONTACTS_AUTH: 'open',
      SINGLE_INSTANCE: 'true',
    };
    expect(loadConfig({}, true).logFormat).toBe('pretty');
    expect(loadConfig({}, false).logFormat).toBe('json');
    expect(loadConfig(production, true).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'json' }, true).logFormat).toBe('json');
  });
});
