import 'reflect-metadata';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { freePort } from '#test/support/ports.js';
import { FakePlatform } from './fake-platforms.js';
import { browserOf, fakePlatformEnv, until } from './helpers.js';

const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

/**
 * A publisher worker killed (SIGKILL) while a platform holds its call: another worker settles the
 * post within a minute. Mastodon takes an Idempotency-Key, so the call is made again and the post
 * goes out once; X takes none, so the attempt ends failed with its outcome unknown, and only a
 * retry with `force` posts again.
 */
onPostgres('publisher: a worker killed mid-call', () => {
  let platform: TestPlatform;
  let base: string;
  let alice: Record<string, string>;
  let workerEnv: Record<string, string>;
  const workers: ChildProcessWithoutNullStreams[] = [];
  const mastodon = new FakePlatform('mastodon', 'masto-client', 'masto-secret');
  const x = new FakePlatform('x', 'x-client', 'x-secret');

  /** `npm run worker` as deployed: a process of its own on the same database. */
  async function startWorker(): Promise<ChildProcessWithoutNullStreams> {
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'scripts', 'worker.js')], {
      env: workerEnv,
    });
    workers.push(child);
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker did not start:\n${output}`)), 60_000);
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('publisher worker running')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`worker exited with ${code}:\n${output}`)));
    });
    return child;
  }

  const kill = (child: ChildProcessWithoutNullStreams) =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });

  async function connect(platformName: string) {
    const start = await rest('GET', `${base}/api/integrations/${platformName}/connect`, undefined, alice);
    const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    const callback = await rest('GET', authorize.headers.get('location')!, undefined, browserOf(start));
    expect(callback.status).toBe(302);
  }

  const item = async (id: string) => (await rest('GET', `${base}/api/content-ops/items/${id}`, undefined, alice)).body;
  const settled = (id: string) =>
    until(async () => {
      const current = await item(id);
      return current.status === 'published' || current.status === 'failed' ? current : null;
    }, 90_000);

  beforeAll(async () => {
    await Promise.all([mastodon.start(), x.start()]);
    const port = await freePort();
    const env = {
      ...fakePlatformEnv(port, { mastodon, x }),
      PLATFORM_TIMEOUT_MS: '60000',
      PUBLISH_WORKER: 'off',
    };
    platform = await startTestPlatform(env);
    base = platform.urls.socialRest;
    alice = { authorization: `Bearer ${await platform.token('alice')}` };
    await connect('mastodon');
    await connect('x');
    workerEnv = {
      PATH: process.env.PATH ?? '',
      ...env,
      DATABASE_URL: platform.config.env.DATABASE_URL!,
      DATA_DIR: platform.config.dataDir,
      LOG_LEVEL: 'info',
    };
  }, 120_000);

  afterAll(async () => {
    for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) await kill(worker);
    await platform?.stop();
    await Promise.all([mastodon.stop(), x.stop()]);
  });

  const createPost = async (text: string, platforms: string[]) => {
    const created = await rest(
      'POST',
      `${base}/api/posts`,
      { content: text, platforms, scheduledAt: new Date(Date.now() + 1000).toISOString() },
      alice,
    );
    expect(created.status).toBe(201);
    return created.body as { id: string };
  };

  it('Mastodon: the interrupted call is made again with the same Idempotency-Key, and the post is published exactly once, within a minute', async () => {
    const first = await startWorker();
    mastodon.postMode = 'slow';
    const text = `Killed mid-call ${Date.now()}`;
    const post = await createPost(text, ['mastodon']);
    await until(async () => mastodon.posts.some((p) => p.text === text), 30_000);
    await kill(first);
    const killedAt = Date.now();
    mastodon.postMode = 'ok';
    await startWorker();
    const done = await settled(post.id);
    const settleMs = Date.now() - killedAt;
    expect(done.status).toBe('published');
    expect(settleMs).toBeLessThan(60_000);
    expect(done.attempts).toHaveLength(1);
    expect(done.attempts[0]).toMatchObject({ status: 'succeeded', outcomeUnknown: false });
    const sent = mastodon.posts.filter((p) => p.text === text);
    expect(sent).toHaveLength(1);
    expect(sent[0].idempotencyKey).toBe(done.attempts[0].id);
    console.log(`mastodon: settled ${settleMs} ms after the worker was killed`);
  }, 180_000);

  it('X: the attempt ends failed with its outcome unknown, within a minute; retry needs force: true', async () => {
    const [running] = workers.filter((worker) => worker.exitCode === null && worker.signalCode === null);
    x.postMode = 'slow';
    const text = `Killed mid-tweet ${Date.now()}`;
    const post = await createPost(text, ['x']);
    await until(async () => x.posts.some((p) => p.text === text), 30_000);
    await kill(running);
    const killedAt = Date.now();
    x.postMode = 'ok';
    await startWorker();
    const done = await settled(post.id);
    const settleMs = Date.now() - killedAt;
    expect(done.status).toBe('failed');
    expect(settleMs).toBeLessThan(60_000);
    expect(done.attempts).toHaveLength(1);
    expect(done.attempts[0]).toMatchObject({
      status: 'failed',
      outcomeUnknown: true,
      error: expect.stringMatching(/outcome is unknown/),
    });
    expect(x.posts.filter((p) => p.text === text)).toHaveLength(1);
    console.log(`x: settled ${settleMs} ms after the worker was killed`);

    const refused = await rest('POST', `${base}/api/content-ops/items/${post.id}/retry`, {}, alice);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ unknownOutcome: ['x'], errors: [{ field: 'force' }] });
    expect((await item(post.id)).status).toBe('failed');

    const forced = await rest('POST', `${base}/api/content-ops/items/${post.id}/retry`, { force: true }, alice);
    expect(forced.status).toBe(200);
    expect((await settled(post.id)).status).toBe('published');
    // The user asked for it knowing: the platform now has it twice.
    expect(x.posts.filter((p) => p.text === text)).toHaveLength(2);
  }, 180_000);
});
