import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { buildSchema, isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { composeSupergraph } from '#scripts/codegen/supergraph.js';
import { loadConfig } from '#lib/config.js';
import { executionOf } from '#lib/subgraph/local-subgraph.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { buildFederatedSchema } from '#lib/subgraph/federated-schema.js';
import { contactsSubgraph } from '#subgraphs/contacts/contacts.subgraph.js';
import { socialSubgraph } from '#subgraphs/social/social.subgraph.js';
import { surveysSubgraph } from '#subgraphs/surveys/surveys.subgraph.js';

/** Names federation and composition generate (`_Service`, `_Any`, `join__Graph`, `link__Import`...): not ours to describe. */
const GENERATED = /^(__|_|join__|link__)/;

/** Every type, field and argument of the schema without a description, as `Type`, `Type.field` and `Type.field(argument)`. */
function undescribed(schema: GraphQLSchema): string[] {
  const missing: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (GENERATED.test(type.name)) continue;
    if (!type.description) missing.push(type.name);
    if (!isObjectType(type) && !isInterfaceType(type) && !isInputObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (GENERATED.test(field.name)) continue;
      if (!field.description) missing.push(`${type.name}.${field.name}`);
      for (const argument of 'args' in field ? field.args : []) {
        if (!argument.description) missing.push(`${type.name}.${field.name}(${argument.name})`);
      }
    }
  }
  return missing;
}

describe('checked-in schema', () => {
  it('matches the code and composes (run `npm run schema` after changing a subgraph)', async () => {
    const { subgraphs, supergraphSdl } = await composeSupergraph(loadConfig({}));
    const read = (name: string) => readFileSync(path.join(PROJECT_ROOT, 'schema', `${name}.graphql`), 'utf8');
    for (const { name, sdl } of subgraphs) expect({ name, sdl }).toEqual({ name, sdl: read(name) });
    expect(supergraphSdl).toBe(read('supergraph'));
  });

  it('describes every type, field and argument of the supergraph (the explorers and API documents show them)', async () => {
    const { supergraphSdl } = await composeSupergraph(loadConfig({}));
    const schema = buildSchema(supergraphSdl);
    expect(undescribed(schema)).toEqual([]);
    expect(Object.keys(schema.getTypeMap()).length).toBeGreaterThan(100);
  });

  it('lets the gateway run every subgraph compiled in process (no type resolver to await)', async () => {
    for (const definition of [socialSubgraph(), surveysSubgraph(), contactsSubgraph(loadConfig({}))]) {
      expect(executionOf((await buildFederatedSchema(definition)).guarded)).toBe('compiled');
    }
  });

  it('finds what lacks a description (the check above can fail)', () => {
    const schema = buildSchema(`
      "Described" type Query { "Described" a(x: Int): Int, b("Described" y: Int, z: Int): Int }
      input In { c: Int }
    `);
    expect(undescribed(schema)).toEqual(['Query.a(x)', 'Query.b', 'Query.b(z)', 'In', 'In.c']);
  });
});
