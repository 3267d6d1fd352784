import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import { PROJECT_ROOT } from '#lib/paths.js';
import { InstanceSet, sharedServers } from '#test/support/instances.js';
import { checkOutRelease, PREVIOUS_RELEASE } from '#test/support/previous-release.js';
import { sleep } from '#test/social-reach/helpers.js';

const describeShared = sharedServers() ? describe : describe.skip;

interface Request {
  kind: 'write' | 'read';
  instance: string;
  status: number | 'no answer';
  detail?: string;
}

/**
 * A rolling upgrade as docs/operations.md orders it, under load: two instances of the previous release
 * (a git worktree of PREVIOUS_RELEASE, migrating on start as it always did) serve contact writes and
 * reads; this release's `npm run migrate` brings the schema up to date while they serve; then each old
 * instance in turn is replaced by one of this release with MIGRATE_ON_START=false, the client (a load
 * balancer) sending to the live ones and leaving an instance before it gets SIGTERM. No request may
 * fail and no acknowledged write may be lost.
 */
describeShared('rolling upgrade from the previous release, under load', () => {
  const set = new InstanceSet('upgrade');
  const { instances } = set;
  let previous: Awaited<ReturnType<typeof checkOutRelease>> | undefined;
  const run = randomBytes(4).toString('hex');

  /** This release's migrations, as the Job or the Compose service runs them; the exit code and what it printed. */
  const migrate = async (...args: string[]) => {
    const answer = await promisify(execFile)(
      process.execPath,
      [path.join(PROJECT_ROOT, 'dist', 'scripts', 'migrate.js'), ...args],
      {
        env: { PATH: process.env.PATH ?? '', ...set.shared, DATA_DIR: instances.new1.env.DATA_DIR },
      },
    ).then(
      ({ stdout }) => ({ code: 0, output: stdout }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        output: error.stdout + error.stderr,
      }),
    );
    return answer;
  };

  beforeAll(async () => {
    previous = await checkOutRelease(PREVIOUS_RELEASE);
    await set.prepare(['old1', 'old2', 'new1', 'new2']);
    await set.start('old1', {}, previous.root);
    await set.start('old2', {}, previous.root);
  }, 400_000);

  afterAll(async () => {
    await set.close();
    await previous?.remove();
  });

  it('loses no write and fails no request', async () => {
    const history: Request[] = [];
    const acknowledged = new Map<string, string>();
    let live = ['old1', 'old2'];
    const inFlight: Record<string, number> = {};
    let turn = 0;
    let loading = true;
    let sequence = 0;

    /** One request to the next live instance, as a load balancer sends it. */
    const request = async (kind: Request['kind'], send: (base: string) => Promise<Response>) => {
      const instance = live[turn++ % live.length];
      inFlight[instance] = (inFlight[instance] ?? 0) + 1;
      try {
        const answer = await send(instances[instance].contacts);
        const body = (await answer.json().catch(() => ({}))) as Record<string, string>;
        history.push({ kind, instance, status: answer.status, detail: answer.ok ? undefined : JSON.stringify(body) });
        return answer.ok ? body : undefined;
      } catch (error) {
        history.push({ kind, instance, status: 'no answer', detail: String(error) });
        return undefined;
      } finally {
        inFlight[instance] -= 1;
      }
    };
    const client = async () => {
      while (loading) {
        const email = `u${run}-${sequence++}@upgrade.example`;
        const made = await request('write', (base) =>
          fetch(`${base}/api/contacts`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': `upgrade-${run}-${email}` },
            body: JSON.stringify({ firstName: 'Upgrade', email, company: `upgrade-${run}` }),
            signal: AbortSignal.timeout(15_000),
          }),
        );
        if (made?.id) acknowledged.set(made.id, email);
        const ids = [...acknowledged.keys()];
        const id = ids[Math.floor(Math.random() * ids.length)];
        if (id) {
          const read = await request('read', (base) =>
            fetch(`${base}/api/contacts/${id}`, { signal: AbortSignal.timeout(15_000) }),
          );
          if (read && read.email !== acknowledged.get(id))
            history.push({ kind: 'read', instance: '?', status: 200, detail: `contact ${id} read as ${read.email}` });
        }
      }
    };
    /** Takes an instance out of the rotation, lets what it is answering finish, then stops it as an orchestrator does. */
    const retire = async (name: string) => {
      live = live.filter((instance) => instance !== name);
      while (inFlight[name]) await sleep(20);
      await set.stop(name, 'SIGTERM');
    };

    const clients = Promise.all([client(), client(), client()]);
    await sleep(2_000);
    const pending = await migrate('--check');
    expect(pending).toMatchObject({ code: 1, output: expect.stringContaining('pending contacts') });
    const migrated = await migrate();
    expect(migrated.code).toBe(0);
    // The previous release serves on the new schema for a while, as its pods do until they are replaced.
    await sleep(2_000);
    for (const [replacement, old] of [
      ['new1', 'old1'],
      ['new2', 'old2'],
    ]) {
      await set.start(replacement, { MIGRATE_ON_START: 'false' });
      live = [...live, replacement];
      await sleep(1_500);
      await retire(old);
    }
    await sleep(2_000);
    loading = false;
    await clients;

    const anomalies: string[] = [];
    const failed = history.filter((entry) => typeof entry.status !== 'number' || entry.status >= 300);
    if (failed.length) anomalies.push(`${failed.length} requests failed: ${JSON.stringify(failed.slice(0, 3))}`);
    // Read back the whole book (the test's own database) as a client would: a 503 (the shared server out of
    // connections, say) is asked again after a while. The run's writes are told by their e-mail addresses.
    const exportUrl = `${instances.new1.contacts}/api/contacts/export`;
    let exportAnswer = await fetch(exportUrl);
    for (let tries = 1; exportAnswer.status === 503 && tries < 10; tries++) {
      await sleep(1_000);
      exportAnswer = await fetch(exportUrl);
    }
    expect(exportAnswer.status).toBe(200);
    const [header, ...rows]: string[][] = parse(await exportAnswer.text());
    const emailColumn = header.indexOf('email');
    const stored = rows.map((row) => row[emailColumn]).filter((email) => email.startsWith(`u${run}-`));
    const lost = [...acknowledged.values()].filter((email) => !stored.includes(email));
    if (lost.length) anomalies.push(`${lost.length} acknowledged writes are missing: ${lost.slice(0, 3).join(', ')}`);
    if (new Set(stored).size !== stored.length)
      anomalies.push(`${stored.length - new Set(stored).size} writes are stored twice`);
    const served = (prefix: string) => history.filter((entry) => entry.instance.startsWith(prefix)).length;
    if (!served('old') || !served('new')) anomalies.push('the load did not reach both releases');
    if ((await migrate('--check')).code !== 0) anomalies.push('migrations are still pending after the upgrade');

    const verdict = anomalies.length ? `ANOMALIES:\n  ${anomalies.join('\n  ')}` : 'no anomaly';
    console.log(
      `upgrade from ${PREVIOUS_RELEASE.slice(0, 7)}: ${history.length} requests (${served('old')} to the previous release, ` +
        `${served('new')} to this one), ${acknowledged.size} writes acknowledged, ${stored.length} stored: ${verdict}`,
    );
    expect(anomalies).toEqual([]);
  }, 240_000);
});
