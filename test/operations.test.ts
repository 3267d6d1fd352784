import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { buildSchema, parse, validate } from 'graphql';
import { PROJECT_ROOT } from '#lib/paths.js';
import { generateOperationTypes } from '#scripts/codegen/operation-types.js';

const supergraph = buildSchema(readFileSync(path.join(PROJECT_ROOT, 'schema', 'supergraph.graphql'), 'utf8'));
const ADAPTERS = ['social', 'surveys', 'contacts'];

/** Every operation and fragment of an adapter, as one document (fragments are shared between files). */
function operationsOf(service: string): string {
  const folder = path.join(PROJECT_ROOT, 'rest-adapters', service, 'operations');
  return readdirSync(folder)
    .filter((name) => name.endsWith('.graphql'))
    .map((name) => readFileSync(path.join(folder, name), 'utf8'))
    .join('\n');
}

describe("the REST adapters' GraphQL operations", () => {
  it.each(ADAPTERS)('%s: every operation validates against schema/supergraph.graphql', (service) => {
    expect(validate(supergraph, parse(operationsOf(service))).map((error) => error.message)).toEqual([]);
  });

  it('the validation finds an operation the supergraph does not have (the check above can fail)', () => {
    const errors = validate(supergraph, parse('query Broken($id: ID!) { contact(id: $id) { id shoeSize } }'));
    expect(errors.map((error) => error.message)).toEqual(['Cannot query field "shoeSize" on type "Contact".']);
  });

  it('the checked-in operation types are what GraphQL Code Generator makes (run `npm run schema` after changing an operation)', async () => {
    const files = await generateOperationTypes();
    expect(files.map(({ filename }) => filename).sort()).toEqual(
      ADAPTERS.map((service) => `rest-adapters/${service}/operations.generated.ts`).sort(),
    );
    for (const { filename, content } of files) {
      expect({ filename, content }).toEqual({
        filename,
        content: readFileSync(path.join(PROJECT_ROOT, filename), 'utf8'),
      });
    }
  });
});
