import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FormattedExecutionResult } from 'graphql';
import { startSurveysSubgraph } from '#subgraphs/surveys/index.js';
import type { SurveysRuntime } from '#subgraphs/surveys/surveys.runtime.js';
import { reader, startTestSubgraph, type TestSubgraph } from '#test/support/subgraph.js';

const FOLLOW = `subscription ($after: String) {
  surveyEvents(after: $after) { id cursor type surveyId occurredAt survey { id venueName } }
}`;

const kinds = process.env.TEST_DATABASE_URL ? (['postgresql', 'pglite'] as const) : (['pglite'] as const);

describe.each(kinds)('surveyEvents subscription on %s', (kind) => {
  let surveys: TestSubgraph<SurveysRuntime>;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let admin: Record<string, string>;

  const createSurvey = async (venueName: string, headers: Record<string, string>): Promise<string> =>
    (
      await surveys.run(
        'mutation ($input: CreateSurveyInput!) { createSurvey(input: $input) { id } }',
        { input: { venueName } },
        headers,
      )
    ).createSurvey.id;
  const follow = (variables: Record<string, unknown>, headers: Record<string, string>) =>
    surveys.subgraph.local.subscribe({ query: FOLLOW, variables }, { headers });
  const eventOf = (result: FormattedExecutionResult | 'ended') => {
    if (result === 'ended' || result.errors) throw new Error(JSON.stringify(result));
    return (result.data as any).surveyEvents;
  };

  beforeAll(async () => {
    surveys = await startTestSubgraph(startSurveysSubgraph, {
      embedded: kind === 'pglite',
      env: { ADMIN_EMAILS: 'boss@example.com' },
    });
    alice = await surveys.bearer('alice', undefined, 'alice@example.com');
    bob = await surveys.bearer('bob', undefined, 'bob@example.com');
    admin = await surveys.bearer('boss', undefined, 'boss@example.com');
  }, 60_000);
  afterAll(() => surveys?.stop());

  it('a surveyor follows their own surveys only; an admin every survey', async () => {
    const aliceStream = follow({}, alice);
    const adminStream = follow({}, admin);
    const aliceEvents = reader(aliceStream);
    const adminEvents = reader(adminStream);
    await Promise.all([aliceEvents.quietFor(200), adminEvents.quietFor(10)]);
    const bobs = await createSurvey('Bob venue', bob);
    const alices = await createSurvey('Alice venue', alice);
    const own = eventOf(await aliceEvents.next());
    expect(own).toMatchObject({ type: 'CREATED', surveyId: alices, survey: { id: alices, venueName: 'Alice venue' } });
    expect(eventOf(await adminEvents.next()).surveyId).toBe(bobs);
    expect(eventOf(await adminEvents.next()).surveyId).toBe(alices);
    await Promise.all([aliceStream.return?.(), adminStream.return?.()]);
  });

  it('resumes after a cursor, oldest first, then live', async () => {
    const stream = follow({}, alice);
    const events = reader(stream);
    await events.quietFor(200);
    const first = await createSurvey('One', alice);
    const second = await createSurvey('Two', alice);
    const [a] = [eventOf(await events.next()), eventOf(await events.next())];
    await stream.return?.();
    const resumed = follow({ after: a.cursor }, alice);
    const again = reader(resumed);
    expect(eventOf(await again.next()).surveyId).toBe(second);
    const third = await createSurvey('Three', alice);
    expect(eventOf(await again.next()).surveyId).toBe(third);
    expect(first).toBeDefined();
    await resumed.return?.();
  });

  it('refuses a token without an email at subscribe, and an after that is no cursor', async () => {
    const noSurveyor = await surveys.bearer('nobody');
    const refused = await reader(follow({}, noSurveyor)).next();
    expect((refused as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    const bad = await reader(follow({ after: 'nope' }, alice)).next();
    expect((bad as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});
