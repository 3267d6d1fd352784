import { type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import S3rver from 's3rver';
import { startJwksServer } from '#test/support/jwks.js';
import { platformPorts } from '#test/support/ports.js';
import { createTestDatabase, type TestDatabase } from '#test/support/platform.js';
import { startPlatformProcess } from '#test/support/process.js';

/** One `npm start` of a set: its settings, its process while it runs, and where its ports are. */
export interface Instance {
  env: Record<string, string>;
  child?: ChildProcessWithoutNullStreams;
  /** Everything it printed since it was last started. */
  output: () => string;
  contacts: string;
  social: string;
  gateway: string;
}

/**
 * What many instances of the platform share, as an operator runs them: one PostgreSQL database, one
 * Redis, one S3 store (s3rver), one ENCRYPTION_KEY and one identity service (a JWKS of the test's own,
 * since a development issuer's key would belong to one DATA_DIR). Each instance has a DATA_DIR of
 * its own, and new ports at each start.
 */
export class InstanceSet {
  readonly instances: Record<string, Instance> = {};
  /** The settings every instance shares. */
  shared: Record<string, string> = {};
  database?: TestDatabase;
  private readonly folders: string[] = [];
  private s3?: S3rver;
  private jwks?: Awaited<ReturnType<typeof startJwksServer>>;

  constructor(
    private readonly label: string,
    private readonly options: {
      /** Settings of each instance besides the shared ones, asked again at each start with its new ports. */
      own?: (name: string, env: Record<string, string>) => Record<string, string>;
    } = {},
  ) {}

  /** Starts the shared services and makes (without starting them) the named instances. */
  async prepare(names: string[], extra: Record<string, string> = {}): Promise<void> {
    const s3Folder = mkdtempSync(path.join(os.tmpdir(), `${this.label}-s3-`));
    this.folders.push(s3Folder);
    this.s3 = new S3rver({
      port: 0,
      address: '127.0.0.1',
      directory: s3Folder,
      silent: true,
      configureBuckets: [{ name: this.label }],
    });
    const { port } = await this.s3.run();
    this.jwks = await startJwksServer('ES256');
    this.database = await createTestDatabase();
    this.shared = {
      HOST: '127.0.0.1',
      WEB_CONCURRENCY: '1',
      TRUST_PROXY: '1',
      DATABASE_URL: this.database.url!,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      STORAGE_URL: `s3://${this.label}`,
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      IDENTITY_JWKS_URL: this.jwks.url,
      IDENTITY_ISSUER: 'https://id.example',
      IDENTITY_AUDIENCE: 'platform',
      ...extra,
    };
    for (const name of names) {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), `${this.label}-${name}-`));
      this.folders.push(dataDir);
      this.instances[name] = {
        env: { ...this.shared, DATA_DIR: dataDir, METRICS_PORT: '0' },
        output: () => '',
        contacts: '',
        social: '',
        gateway: '',
      };
    }
  }

  /** A bearer token of the shared identity service, with every scope. */
  token(sub: string): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setSubject(sub)
      .setIssuer('https://id.example')
      .setAudience('platform')
      .setExpirationTime('1h')
      .sign(this.jwks!.privateKey);
  }

  /**
   * Starts an instance; its ports are chosen just before, so that no outgoing socket of another took one meanwhile.
   * `root` is the tree whose build it runs: this one, or another release's.
   */
  async start(name: string, env: Record<string, string> = {}, root?: string): Promise<Instance> {
    const instance = this.instances[name];
    Object.assign(instance.env, await platformPorts());
    Object.assign(instance.env, this.options.own?.(name, instance.env) ?? {}, env);
    instance.contacts = `http://127.0.0.1:${instance.env.CONTACTS_REST_PORT}`;
    instance.social = `http://127.0.0.1:${instance.env.SOCIAL_REST_PORT}`;
    instance.gateway = `http://127.0.0.1:${instance.env.GATEWAY_PORT}/graphql`;
    const started = await startPlatformProcess(instance.env, root);
    instance.child = started.child;
    instance.output = started.output;
    return instance;
  }

  /** Stops an instance with `signal` (SIGKILL: nothing drains) and waits until it has exited. */
  stop(name: string, signal: NodeJS.Signals): Promise<void> {
    const child = this.instances[name].child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }

  async close(): Promise<void> {
    await Promise.all(Object.keys(this.instances).map((name) => this.stop(name, 'SIGTERM')));
    await this.s3?.close();
    this.jwks?.close();
    await this.database?.drop();
    for (const folder of this.folders) rmSync(folder, { recursive: true, force: true });
  }
}

/** Whether the shared servers the instance tests need are there (PostgreSQL and Redis). */
export const sharedServers = () => Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
