import type { RuleTree } from '#lib/subgraph/shield.js';
import type { ContactsScopeRules } from '../contacts.scopes.js';

export function pipelinesRules({ scope }: ContactsScopeRules): RuleTree {
  const access = scope('contacts.read');
  const change = scope('contacts.write');
  return {
    Query: { pipelines: access, pipelinePage: access, pipeline: access, stageMoves: access, stageMovePage: access },
    Mutation: { createPipeline: change, moveContact: change },
  };
}
