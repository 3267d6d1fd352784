import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import { InstanceSet, sharedServers } from '#test/support/instances.js';

/** One acknowledged or unknown write of the history: what was asked, of which instance, and what came back. */
interface Write {
  email: string;
  key: string;
  instance: string;
  status: number | 'no answer';
}

const describeShared = sharedServers() ? describe : describe.skip;

/**
 * The history checker: two instances of the platform on one PostgreSQL, one Redis and one S3 store,
 * writers against both, one instance SIGKILLed mid-run and started again, then the recorded history
 * is checked: every acknowledged write is there exactly once (a write with no answer is retried with
 * its Idempotency-Key on the other instance, as a client does, and is there once too), no answer is a
 * 5xx other than 503, an Idempotency-Key is replayed across instances, and a rate limit holds across
 * both (N in total, not N each).
 */
describeShared('two instances, one killed mid-run: the history holds', () => {
  const set = new InstanceSet('history');
  const instances = set.instances;
  /**
   * This run's own tag, and a client address of its own, so that nothing else on the shared Redis counts with it.
   * The tag starts with a letter: the export finds the writes by a search of `history-<tag>`, and PostgreSQL's
   * parser reads `history-` and digits alone as a word and a negative number, which a search's words never match.
   */
  const run = `r${randomBytes(4).toString('hex')}`;
  const client = `198.51.${randomInt(0, 255)}.${randomInt(1, 255)}`;
  const start = (name: string) => set.start(name);
  const kill = (name: string) => set.stop(name, 'SIGKILL');

  beforeAll(async () => {
    await set.prepare(['a', 'b']);
    // One after the other: the first migrates, the second finds nothing left to do.
    await start('a');
    await start('b');
  }, 180_000);

  afterAll(() => set.close());

  const createContact = async (instance: string, email: string, key: string): Promise<number | 'no answer'> => {
    try {
      const answer = await fetch(`${instances[instance].contacts}/api/contacts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-forwarded-for': client },
        body: JSON.stringify({ firstName: 'History', email, company: `history-${run}` }),
        signal: AbortSignal.timeout(10_000),
      });
      await answer.arrayBuffer();
      return answer.status;
    } catch {
      return 'no answer';
    }
  };

  it('keeps every acknowledged write exactly once, answers no 5xx but 503, and shares keys and limits', async () => {
    const history: Write[] = [];
    let writing = true;
    let down: string | undefined;
    let sequence = 0;
    const writer = async (home: string) => {
      while (writing) {
        const email = `h${run}-${sequence++}@history.example`;
        const key = `history-${run}-${email}`;
        let instance = home === down ? (home === 'a' ? 'b' : 'a') : home;
        let status = await createContact(instance, email, key);
        history.push({ email, key, instance, status });
        // No answer: the client cannot know whether it was written, so it asks again with the same key elsewhere.
        while (status === 'no answer' || status === 503) {
          instance = instance === 'a' ? 'b' : 'a';
          status = await createContact(instance, email, key);
          history.push({ email, key, instance, status });
        }
      }
    };
    const writers = Promise.all(['a', 'a', 'b', 'b'].map(writer));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    down = 'b';
    await kill('b');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await start('b');
    down = undefined;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    writing = false;
    await writers;

    const anomalies: string[] = [];
    const unexpected = history.filter(
      (write) => typeof write.status === 'number' && write.status >= 500 && write.status !== 503,
    );
    if (unexpected.length)
      anomalies.push(
        `${unexpected.length} answers were a 5xx other than 503: ${JSON.stringify(unexpected.slice(0, 3))}`,
      );
    const acknowledged = new Set(
      history.filter((write) => write.status === 201 || write.status === 200).map((write) => write.email),
    );
    const exportAnswer = await fetch(
      `${instances.a.contacts}/api/contacts/export?search=${encodeURIComponent(`history-${run}`)}`,
      { headers: { 'x-forwarded-for': client } },
    );
    const exportText = await exportAnswer.text();
    // A failed export would read as every write lost: say what it answered instead.
    expect({ status: exportAnswer.status, body: exportText.slice(0, 500) }).toEqual({
      status: 200,
      body: expect.stringMatching(/^id,/),
    });
    const exported: string[][] = parse(exportText);
    const stored = exported.slice(1).map((row) => row[3]);
    const storedOnce = new Set(stored);
    if (storedOnce.size !== stored.length)
      anomalies.push(`${stored.length - storedOnce.size} writes are stored more than once`);
    const lost = [...acknowledged].filter((email) => !storedOnce.has(email));
    if (lost.length) anomalies.push(`${lost.length} acknowledged writes are missing: ${lost.slice(0, 3).join(', ')}`);
    const phantom = stored.filter((email) => !acknowledged.has(email));
    if (phantom.length)
      anomalies.push(`${phantom.length} stored writes were never acknowledged, even after their retries`);

    // An Idempotency-Key replayed on the other instance answers what the first one did.
    const key = `history-${run}-replay`;
    const first = await fetch(`${instances.a.contacts}/api/contacts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-forwarded-for': client },
      body: JSON.stringify({ firstName: 'Replay', company: `history-${run}-replay` }),
    });
    const replay = await fetch(`${instances.b.contacts}/api/contacts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-forwarded-for': client },
      body: JSON.stringify({ firstName: 'Replay', company: `history-${run}-replay` }),
    });
    const [made, replayed] = [(await first.json()) as { id: string }, (await replay.json()) as { id: string }];
    if (first.status !== 201 || replay.status !== 201 || made.id !== replayed.id)
      anomalies.push(
        `the Idempotency-Key was not replayed across instances: ${first.status} ${made.id}, then ${replay.status} ${replayed.id}`,
      );

    // A rate limit of 30 sign-in mails per client in 15 minutes, asked 20 times of each instance: 30 in total.
    let accepted = 0;
    for (const instance of ['a', 'b'])
      for (let n = 0; n < 20; n++) {
        const answer = await fetch(instances[instance].gateway, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
          body: JSON.stringify({
            query: `mutation { requestMagicLink(input: { email: "limit${n}-${instance}-${run}@history.example" }) { accepted } }`,
          }),
        });
        const body = (await answer.json()) as { errors?: unknown[] };
        if (!body.errors) accepted += 1;
      }
    if (accepted !== 30) anomalies.push(`the sign-in limit let ${accepted} through across both instances, not 30`);

    const verdict = anomalies.length ? `ANOMALIES:\n  ${anomalies.join('\n  ')}` : 'no anomaly';
    console.log(
      `history of ${history.length} requests (${acknowledged.size} writes acknowledged, ${stored.length} stored, ` +
        `${history.filter((write) => write.status === 'no answer').length} without an answer), ` +
        `one instance killed and restarted: ${verdict}`,
    );
    expect(anomalies).toEqual([]);
  }, 240_000);
});
