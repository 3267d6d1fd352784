import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  buildASTSchema,
  getNamedType,
  isNonNullType,
  isObjectType,
  parse,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { freePort } from '#test/support/ports.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { startTcpProxy, type TcpProxy } from '#test/support/tcp-proxy.js';

/**
 * One graph for frontends: one service refusing or failing nulls only its own fields, each with an
 * error at its path naming the code and the subgraph; the rest of the answer stands. Surveys run in
 * the gateway's process, or over HTTP (`SURVEYS_SUBGRAPH_URL`) through a proxy the test can cut.
 */
describe.each([
  ['in process', false],
  ['over HTTP (SURVEYS_SUBGRAPH_URL)', true],
])('partial answers with surveys %s', (_how, overHttp) => {
  let platform: TestPlatform;
  let proxy: TcpProxy | undefined;
  const contactIds: string[] = [];

  beforeAll(async () => {
    const env: Record<string, string> = {};
    if (overHttp) {
      const port = await freePort();
      proxy = await startTcpProxy({ host: '127.0.0.1', port });
      env.SURVEYS_SUBGRAPH_PORT = String(port);
      env.SURVEYS_SUBGRAPH_URL = `http://127.0.0.1:${proxy.port}/graphql`;
    }
    platform = await startTestPlatform(env);
    for (const firstName of ['Ada', 'Grace']) {
      const created = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, { firstName });
      expect(created.status).toBe(201);
      contactIds.push(created.body.id as string);
    }
  });
  afterAll(async () => {
    await platform?.stop();
    await proxy?.close();
  });

  it('answers every contact with surveys null and an UNAUTHENTICATED error at each, without survey credentials', async () => {
    const { status, body } = await graphql<{ contacts: { nodes: { id: string; surveys: unknown }[] } }>(
      platform.urls.gateway,
      '{ contacts { nodes { id surveys { id } } } }',
    );
    expect(status).toBe(200);
    expect(body.data?.contacts.nodes).toEqual(expect.arrayContaining(contactIds.map((id) => ({ id, surveys: null }))));
    const nodes = body.data!.contacts.nodes;
    expect(body.errors).toHaveLength(nodes.length);
    expect(body.errors).toEqual(
      nodes.map((_node, index) =>
        expect.objectContaining({
          path: ['contacts', 'nodes', index, 'surveys'],
          extensions: { code: 'UNAUTHENTICATED', serviceName: 'surveys' },
        }),
      ),
    );
  });

  it('answers the contacts and posts null with its error, without credentials', async () => {
    const { status, body } = await graphql(
      platform.urls.gateway,
      '{ posts(first: 1) { totalCount } contacts(first: 1) { totalCount } }',
    );
    expect(status).toBe(200);
    expect(body.data).toEqual({ posts: null, contacts: { totalCount: contactIds.length } });
    expect(body.errors).toEqual([
      expect.objectContaining({ path: ['posts'], extensions: { code: 'UNAUTHENTICATED', serviceName: 'social' } }),
    ]);
  });

  if (overHttp) {
    it('answers the others when surveys is down: its fields null, each with a SERVICE_UNAVAILABLE error', async () => {
      await proxy!.cut();
      try {
        const { status, body } = await graphql<{ contacts: { nodes: { id: string; surveys: unknown }[] } }>(
          platform.urls.gateway,
          '{ surveys(first: 1) { totalCount } contacts { nodes { id surveys { id } } } contactsHealth { ok } }',
        );
        expect(status).toBe(200);
        const nodes = body.data!.contacts.nodes;
        expect(nodes).toEqual(expect.arrayContaining(contactIds.map((id) => ({ id, surveys: null }))));
        expect(body.data).toMatchObject({ surveys: null, contactsHealth: { ok: true } });
        const unavailable = { code: 'SERVICE_UNAVAILABLE', serviceName: 'surveys' };
        expect(body.errors).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ path: ['surveys'], extensions: unavailable }),
            ...nodes.map((_node, index) =>
              expect.objectContaining({ path: ['contacts', 'nodes', index, 'surveys'], extensions: unavailable }),
            ),
          ]),
        );
        expect(body.errors).toHaveLength(nodes.length + 1);
      } finally {
        await proxy!.restore();
      }
    });
  }
});

/**
 * Every root field (Query and Mutation, in every subgraph and in the supergraph) and every field that
 * crosses from one service to another is nullable: a new non-null one fails here.
 */
describe('nullability of the graph', () => {
  const SUBGRAPHS = ['social', 'surveys', 'contacts'];
  const schemaOf = (name: string) =>
    buildASTSchema(parse(readFileSync(path.join(PROJECT_ROOT, 'schema', `${name}.graphql`), 'utf8')), {
      assumeValidSDL: true,
    });
  const subgraphs = new Map(SUBGRAPHS.map((name) => [name, schemaOf(name)]));
  /** Federation's own root fields, which its query planner reads, not clients. */
  const FEDERATION_FIELDS = new Set(['_entities', '_service']);

  const nonNullRootFields = (schema: GraphQLSchema) =>
    [schema.getQueryType(), schema.getMutationType()].flatMap((type) =>
      Object.values(type?.getFields() ?? {})
        .filter((field) => !FEDERATION_FIELDS.has(field.name) && isNonNullType(field.type))
        .map((field) => `${type!.name}.${field.name}: ${String(field.type)}`),
    );

  it.each([...SUBGRAPHS, 'supergraph'])('%s: every root field is nullable', (name) => {
    const schema = subgraphs.get(name) ?? schemaOf(name);
    expect(Object.keys(schema.getQueryType()!.getFields()).length).toBeGreaterThan(3);
    expect(nonNullRootFields(schema)).toEqual([]);
  });

  /** Entity types (`@key`) by name, and the subgraph that owns each: the one that defines most of its fields. */
  const isEntity = (type: GraphQLObjectType) => !!type.astNode?.directives?.some((d) => d.name.value === 'key');
  const ownerOf = new Map<string, string>();
  for (const [name, schema] of subgraphs)
    for (const type of Object.values(schema.getTypeMap()))
      if (isObjectType(type) && isEntity(type)) {
        const owner = ownerOf.get(type.name);
        const count = (subgraph: string) =>
          Object.keys((subgraphs.get(subgraph)!.getType(type.name) as GraphQLObjectType).getFields()).length;
        if (!owner || count(name) > count(owner)) ownerOf.set(type.name, name);
      }

  /**
   * Fields that cross services: one a subgraph adds to another's entity (Contact.surveys, by surveys),
   * and one whose value is another subgraph's entity (Survey.contact, a contacts Contact).
   */
  const crossServiceFields = (): { name: string; field: GraphQLField<unknown, unknown> }[] =>
    [...subgraphs].flatMap(([subgraph, schema]) =>
      Object.values(schema.getTypeMap())
        .filter((type): type is GraphQLObjectType => isObjectType(type) && !type.name.startsWith('__'))
        .flatMap((type) =>
          Object.values(type.getFields())
            .filter((field) => {
              const added = isEntity(type) && ownerOf.get(type.name) !== subgraph && field.name !== 'id';
              const owner = ownerOf.get(getNamedType(field.type).name);
              const reference = owner !== undefined && owner !== subgraph;
              return added || reference;
            })
            .map((field) => ({ name: `${type.name}.${field.name}`, field })),
        ),
    );

  it('finds the fields that cross services, and each is nullable', () => {
    const crossing = crossServiceFields();
    expect(crossing.map(({ name }) => name)).toEqual(expect.arrayContaining(['Contact.surveys', 'Survey.contact']));
    expect(crossing.filter(({ field }) => isNonNullType(field.type)).map(({ name }) => name)).toEqual([]);
  });
});
