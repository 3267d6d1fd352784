import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { graphql, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { pino } from 'pino';
import { Arg, createUnionType, Directive, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import { OutageWatch, subgraphFaults } from '#lib/http/availability.js';
import { AppError } from '#lib/errors.js';
import type { Principal } from '#lib/identity.js';
import { executionOf, localSubgraph } from '#lib/subgraph/local-subgraph.js';
import { allow, requireScope } from '#lib/subgraph/shield.js';
import { buildFederatedSchema } from '#lib/subgraph/federated-schema.js';

@ObjectType()
@Directive('@key(fields: "id")')
class Widget {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => Date) madeAt!: Date;
  @Field(() => String, { nullable: true }) note?: string | null;
}

@ObjectType()
class Gadget {
  @Field(() => Int) size!: number;
}

const Part = createUnionType({
  name: 'Part',
  types: () => [Widget, Gadget] as const,
  resolveType: (value) => ('size' in value ? Gadget : Widget),
});

const widgets: Widget[] = [
  { id: 'w1', name: 'first', madeAt: new Date('2026-01-02T03:04:05.678Z'), note: null },
  // A non-null field whose value is missing: the error nulls the widget, and only the widget.
  { id: 'w2', name: undefined as unknown as string, madeAt: new Date('2026-02-03T04:05:06.789Z') },
];

@Resolver()
class PartResolver {
  @Query(() => [Part])
  parts(): (Widget | Gadget)[] {
    return [widgets[0], { size: 3 }];
  }
}

@Resolver()
class WidgetResolver {
  @Query(() => [Widget], { nullable: 'items' })
  widgets(@Arg('first', () => Int) first: number): Widget[] {
    if (first < 1) throw AppError.badInput('first', 'must be at least 1');
    return widgets.slice(0, first);
  }

  @Query(() => String)
  secret(): string {
    return 'only with the scope';
  }
}

const principal = (scopes: string[]): Principal => ({ userId: 'u', scopes: new Set(scopes), via: 'bearer' });

/**
 * The in-process subgraph runs compiled operations (graphql-jit). Whatever it answers must be what
 * graphql-js's `execute` answers on the same guarded schema, faults formatted alike: data, nulls
 * where errors are, the errors' messages, paths and codes.
 */
describe('local subgraph', () => {
  const build = (withUnion: boolean) =>
    buildFederatedSchema({
      resolvers: withUnion ? [WidgetResolver, PartResolver] : [WidgetResolver],
      orphanedTypes: [Gadget],
      references: {
        Widget: {
          __resolveReference: (reference: { id: string }) => widgets.find((widget) => widget.id === reference.id),
        },
      },
      rules: {
        Query: { widgets: allow, secret: requireScope('secret.read'), ...(withUnion ? { parts: allow } : {}) },
        Widget: allow,
        Gadget: allow,
      },
    });
  const faults = subgraphFaults(pino({ level: 'silent' }), new OutageWatch(), async () => true);
  const subgraphOf = (schema: GraphQLSchema, scopes: string[] = []) =>
    localSubgraph(schema, async () => ({ principal: principal(scopes) }), {
      faults,
      log: pino({ level: 'silent' }),
      part: 'test',
    });

  it('compiles operations unless a type resolver must be awaited (type-graphql unions and interfaces)', async () => {
    expect(executionOf((await build(false)).guarded)).toBe('compiled');
    expect(executionOf((await build(true)).guarded)).toBe('interpreted');
  });

  const cases: {
    name: string;
    query: string;
    variables?: Record<string, unknown>;
    scopes?: string[];
    withUnion?: boolean;
  }[] = [
    {
      name: 'a list, a date, a null',
      query: 'query Widgets($first: Int!) { widgets(first: $first) { id name madeAt note } }',
      variables: { first: 1 },
    },
    {
      name: 'a missing non-null value',
      query: 'query Widgets($first: Int!) { widgets(first: $first) { id name } }',
      variables: { first: 2 },
    },
    {
      name: 'a rule of the service',
      query: 'query Widgets($first: Int!) { widgets(first: $first) { id } }',
      variables: { first: 0 },
    },
    {
      name: 'variables that do not fit',
      query: 'query Widgets($first: Int!) { widgets(first: $first) { id } }',
      variables: { first: 'many' },
    },
    {
      name: 'entities',
      query: 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Widget { name madeAt } } }',
      variables: {
        r: [
          { __typename: 'Widget', id: 'w1' },
          { __typename: 'Widget', id: 'nope' },
        ],
      },
    },
    { name: 'the shield refusing', query: '{ secret }', scopes: [] },
    { name: 'the shield allowing', query: '{ secret }', scopes: ['secret.read'] },
    {
      name: 'a union (interpreted)',
      query: '{ parts { __typename ... on Widget { id } ... on Gadget { size } } }',
      withUnion: true,
    },
  ];

  it.each(cases)('answers as graphql-js does: $name', async ({ query, variables, scopes, withUnion }) => {
    const { guarded } = await build(withUnion ?? false);

    const answer = await subgraphOf(guarded, scopes).execute({ query, variables }, { headers: {} });

    const reference = await graphql({
      schema: guarded,
      source: query,
      variableValues: variables,
      contextValue: { principal: principal(scopes ?? []) },
    });
    const plain = (data: unknown) => (data === undefined ? undefined : JSON.parse(JSON.stringify(data)));
    expect(plain(answer.data)).toEqual(plain(reference.data));
    const essentials = (errors: readonly GraphQLFormattedError[] | undefined) =>
      (errors ?? []).map(({ path, extensions }) => ({ path, code: extensions?.code }));
    if (reference.data === undefined) {
      // Variables that do not fit: no data, BAD_USER_INPUT (as Apollo Server answers over HTTP), the message naming the variable.
      expect(answer.errors?.map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
      expect(answer.errors?.[0].message).toContain('$first');
    } else {
      const formatted = (reference.errors ?? []).map((error) => faults.formatError(error.toJSON(), error));
      expect(essentials(answer.errors)).toEqual(essentials(formatted));
      expect(answer.errors?.map((error) => error.message)).toEqual(
        formatted.length ? formatted.map((error) => error.message) : undefined,
      );
    }
  });

  it('runs a kept operation again with new variables', async () => {
    const subgraph = subgraphOf((await build(false)).guarded);
    const query = 'query Widgets($first: Int!) { widgets(first: $first) { id } }';
    expect((await subgraph.execute({ query, variables: { first: 1 } }, { headers: {} })).data).toEqual({
      widgets: [{ id: 'w1' }],
    });
    expect((await subgraph.execute({ query, variables: { first: 2 } }, { headers: {} })).data).toEqual({
      widgets: [{ id: 'w1' }, { id: 'w2' }],
    });
  });

  it('refuses a text of several operations (the gateway sends one per fetch)', async () => {
    const subgraph = subgraphOf((await build(false)).guarded);
    const answer = await subgraph.execute(
      { query: 'query A { secret } query B { widgets(first: 1) { id } }', operationName: 'B' },
      { headers: {} },
    );
    expect(answer.data).toBeUndefined();
    expect(answer.errors?.map((error) => error.extensions?.code)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });
});
