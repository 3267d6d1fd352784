import 'reflect-metadata';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { composeSupergraph } from './codegen/supergraph.js';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { loadConfig } from '#lib/config.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { openApiDocuments, openApiText } from './codegen/openapi.js';
import { generateOperationTypes } from './codegen/operation-types.js';

exitWithHelpIfAsked(`
usage: npm run schema       (node dist/scripts/schema.js)

Prints each subgraph's SDL from the code into schema/<subgraph>.graphql, composes them into
schema/supergraph.graphql (and its copy deploy/kubernetes/base/supergraph.graphql), and each REST
service's OpenAPI document into schema/openapi/<service>.json, and the types of each adapter's
operations (GraphQL Code Generator, against the supergraph) into rest-adapters/<service>/operations.generated.ts.
Run it after changing a subgraph's types, an operation or a REST route: a test fails while the
checked-in files and the code differ.
`);

const KUBERNETES_SUPERGRAPH = 'deploy/kubernetes/base/supergraph.graphql';

/** `npm run schema`: writes schema/<subgraph>.graphql and the composed schema/supergraph.graphql (and its copy for Kubernetes). */
async function main(): Promise<void> {
  // Default ports: the supergraph names the standard URLs; deployments override them by name.
  const { subgraphs, supergraphSdl } = await composeSupergraph(loadConfig({}));
  const dir = path.join(PROJECT_ROOT, 'schema');
  for (const { name, sdl } of subgraphs) writeFileSync(path.join(dir, `${name}.graphql`), sdl);
  writeFileSync(path.join(dir, 'supergraph.graphql'), supergraphSdl);
  // Kustomize reads files only below its own folder: the supergraph ConfigMap is made from this copy.
  writeFileSync(path.join(PROJECT_ROOT, KUBERNETES_SUPERGRAPH), supergraphSdl);
  console.log(
    `wrote ${subgraphs.map(({ name }) => `schema/${name}.graphql`).join(', ')}, schema/supergraph.graphql and ${KUBERNETES_SUPERGRAPH}`,
  );

  const operationTypes = await generateOperationTypes();
  for (const { filename, content } of operationTypes) writeFileSync(path.join(PROJECT_ROOT, filename), content);
  console.log(`wrote ${operationTypes.map(({ filename }) => filename).join(', ')}`);

  const documents = await openApiDocuments();
  mkdirSync(path.join(dir, 'openapi'), { recursive: true });
  for (const [name, document] of Object.entries(documents))
    writeFileSync(path.join(dir, 'openapi', `${name}.json`), openApiText(document));
  console.log(
    `wrote ${Object.keys(documents)
      .map((name) => `schema/openapi/${name}.json`)
      .join(', ')}`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
