import { allow } from '../../lib/shield.js';
import type { SubgraphDefinition } from '../../lib/subgraph.js';
import { ExportFormatResolver } from './export-format.resolver.js';

export function surveysSubgraph(): SubgraphDefinition {
  return {
    resolvers: [ExportFormatResolver],
    rules: { Query: { surveyExportFormats: allow } },
  };
}
