import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';
import { rest, startTestPlatform } from '#test/support/platform.js';
import { freePorts } from '#test/support/ports.js';
import { startPlatformProcess } from '#test/support/process.js';

const startProcess = startPlatformProcess;

function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('platform lifecycle', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lifecycle-test-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts on embedded PGlite, stops cleanly on SIGTERM, and keeps acknowledged data across a restart', async () => {
    // Held together, so no two of them can be the same port.
    const [
      gateway,
      socialRest,
      surveysRest,
      contactsRest,
      socialSubgraph,
      surveysSubgraph,
      contactsSubgraph,
      metricsPort,
    ] = await freePorts(8);
    const ports = {
      GATEWAY_PORT: gateway,
      SOCIAL_REST_PORT: socialRest,
      SURVEYS_REST_PORT: surveysRest,
      CONTACTS_REST_PORT: contactsRest,
      SOCIAL_SUBGRAPH_PORT: socialSubgraph,
      SURVEYS_SUBGRAPH_PORT: surveysSubgraph,
      CONTACTS_SUBGRAPH_PORT: contactsSubgraph,
      METRICS_PORT: metricsPort,
    };
    const env = {
      DATA_DIR: dataDir,
      ...Object.fromEntries(Object.entries(ports).map(([key, value]) => [key, String(value)])),
    };
    const contacts = `http://127.0.0.1:${ports.CONTACTS_REST_PORT}`;

    const first = await startProcess(env);
    expect(first.output()).toContain(`http://localhost:${ports.GATEWAY_PORT}/graphql`);
    const created = await rest('POST', `${contacts}/api/contacts`, {
      firstName: 'Persistent',
      email: 'persist@example.com',
    });
    expect(created.status).toBe(201);
    // npm start serves the whole process's metrics on METRICS_PORT.
    const metrics = await fetch(`http://127.0.0.1:${ports.METRICS_PORT}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain(
      'http_requests_total{part="contacts-rest",route="/api/contacts",method="POST",status="201"} 1',
    );
    const exited = exitOf(first.child);
    first.child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const second = await startProcess(env);
    try {
      const read = await rest('GET', `${contacts}/api/contacts/${created.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body.email).toBe('persist@example.com');
    } finally {
      const stopped = exitOf(second.child);
      second.child.kill('SIGINT');
      expect(await stopped).toBe(0);
    }
    // A first start on embedded PGlite initialises three database clusters: slow on two cores.
  }, 400_000);

  it('refuses to start on a bad setting, naming it, with exit code 1', async () => {
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'scripts', 'start.js')], {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, GATEWAY_PORT: 'not-a-port' },
    });
    let output = '';
    child.stderr.on('data', (chunk) => (output += chunk));
    expect(await exitOf(child)).toBe(1);
    expect(output).toContain('GATEWAY_PORT');
  });

  it('answers 500 with a problem body and no internals when the database fails, and recovers', async () => {
    const platform = await startTestPlatform();
    try {
      const base = platform.urls.contactsRest;
      const connection = platform.subgraphs.contacts.orm.em.fork().getConnection();
      await connection.execute('alter table contacts.contact rename to contact_away');
      const failed = await rest('GET', `${base}/api/contacts`, undefined, { 'x-request-id': 'fault-1' });
      expect(failed.status).toBe(500);
      expect(failed.headers.get('content-type')).toContain('application/problem+json');
      expect(failed.body).toMatchObject({ status: 500, title: 'Internal Server Error' });
      expect(JSON.stringify(failed.body)).not.toMatch(/contact_away|relation|select|\.ts:|\.js:/i);
      const create = await rest('POST', `${base}/api/contacts`, { firstName: 'Lost' });
      expect(create.status).toBe(500);
      await connection.execute('alter table contacts.contact_away rename to contact');
      const list = await rest('GET', `${base}/api/contacts`);
      expect(list.status).toBe(200);
      expect(list.body.total).toBe(0);
    } finally {
      await platform.stop();
    }
  });
});
