import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { stripVTControlCharacters } from 'node:util';
import type { FormattedExecutionResult } from 'graphql';
import { startSurveysSubgraph } from '#subgraphs/surveys/index.js';
import type { SurveysRuntime } from '#subgraphs/surveys/surveys.runtime.js';
import { reader, startTestSubgraph, type TestSubgraph } from '#test/support/subgraph.js';

const FOLLOW = `subscription ($after: String) {
  surveyEvents(after: $after) { id cursor type surveyId occurredAt survey { id venueName } }
}`;

const HISTORY = `query ($first: Int, $after: String, $last: Int) {
  surveyEvents(first: $first, after: $after, last: $last) {
    edges { cursor node { id cursor type surveyId survey { id venueName } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

const kinds = process.env.TEST_DATABASE_URL ? (['postgresql', 'pglite'] as const) : (['pglite'] as const);

describe.each(kinds)('surveyEvents subscription on %s', (kind) => {
  let surveys: TestSubgraph<SurveysRuntime>;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let admin: Record<string, string>;
  const statements: string[] = [];

  const history = async (variables: Record<string, unknown>, headers: Record<string, string>) =>
    (await surveys.run(HISTORY, variables, headers)).surveyEvents;
  /**
   * The newest `count` events once the last is `surveyId`'s: an event committed behind a transaction
   * still running (another suite's, on a shared server) is read once that one ends, as the stream reads it.
   */
  const newest = async (count: number, surveyId: string, headers: Record<string, string>) => {
    for (let tries = 0; ; tries++) {
      const page = await history({ last: count }, headers);
      if (page.edges.at(-1)?.node.surveyId === surveyId || tries === 40) return page;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const surveyIdsOf = (page: any): string[] => page.edges.map((edge: any) => edge.node.surveyId);

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
      onQuery: (sql) => statements.push(stripVTControlCharacters(sql)),
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

  it('reads the history with the surveyEvents query (own surveys; an admin all), then follows from its last cursor', async () => {
    const one = await createSurvey('History one', alice);
    const bobs = await createSurvey('History of Bob', bob);
    const two = await createSurvey('History two', alice);
    const own = await newest(2, two, alice);
    expect(own.edges.map((edge: any) => [edge.node.type, edge.node.surveyId, edge.node.survey.venueName])).toEqual([
      ['CREATED', one, 'History one'],
      ['CREATED', two, 'History two'],
    ]);
    for (const edge of own.edges) expect(edge.cursor).toBe(edge.node.cursor);
    expect(surveyIdsOf(await newest(3, two, admin))).toEqual([one, bobs, two]);
    expect(surveyIdsOf(await history({ first: 100 }, bob))).not.toContain(one);

    // Followed after the last edge read: only what came later, and only what the surveyor may see.
    const last = own.pageInfo.endCursor as string;
    const stream = follow({ after: last }, alice);
    const events = reader(stream);
    expect(await events.quietFor(300)).toBe(true);
    await createSurvey('Later of Bob', bob);
    const three = await createSurvey('History three', alice);
    expect(eventOf(await events.next())).toMatchObject({ type: 'CREATED', surveyId: three });
    expect(await events.quietFor(300)).toBe(true);
    await stream.return?.();
    expect(surveyIdsOf(await history({ after: last }, alice))).toEqual([three]);
  });

  it('reads a page of surveyEvents and its surveys in a fixed number of statements, however many events', async () => {
    for (const name of ['P1', 'P2', 'P3', 'P4', 'P5']) await createSurvey(name, alice);
    statements.length = 0;
    const page = await history({ last: 5 }, alice);
    expect(page.edges).toHaveLength(5);
    // The page (the surveyor's own events), then every survey it names at once.
    expect(statements).toEqual([
      expect.stringMatching(
        /^\[query\] select e\.\*, .* from "surveys"\."survey_event" as e\s+where .* and \(e\.owner_email = /,
      ),
      expect.stringMatching(/from "surveys"\."survey"/),
    ]);
  });

  it('refuses the surveyEvents query to a token without an email, and an after that is no cursor', async () => {
    const answer = (variables: Record<string, unknown>, headers: Record<string, string>) =>
      surveys.subgraph.local.execute({ query: HISTORY, variables }, { headers });
    const noSurveyor = await surveys.bearer('nobody');
    expect((await answer({}, noSurveyor)).errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    const bad = await answer({ after: 'nope' }, alice);
    expect(bad.errors?.[0]).toMatchObject({
      extensions: { code: 'BAD_USER_INPUT' },
      message: expect.stringContaining('after'),
    });
  });

  it('refuses a token without an email at subscribe, and an after that is no cursor', async () => {
    const noSurveyor = await surveys.bearer('nobody');
    const refused = await reader(follow({}, noSurveyor)).next();
    expect((refused as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    const bad = await reader(follow({ after: 'nope' }, alice)).next();
    expect((bad as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});
