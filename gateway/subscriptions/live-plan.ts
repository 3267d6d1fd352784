import { buildOperationContext } from '@apollo/gateway';
import { operationFromDocument, type Schema, type Supergraph } from '@apollo/federation-internals';
import { QueryPlanner, type FetchNode, type PlanNode } from '@apollo/query-planner';
import {
  getNamedType,
  getOperationAST,
  isObjectType,
  Kind,
  parse,
  print,
  type DocumentNode,
  type FieldNode,
  type GraphQLSchema,
} from 'graphql';

/**
 * The alias under which the gateway asks the owning subgraph for an event's cursor besides what the
 * client selected: SSE's `id:` needs it whether or not the client asked for `cursor`.
 */
export const CURSOR_ALIAS = 'liveCursor__';

/** How one subscription document runs: a subscription to one subgraph, then a plan per event for the rest. */
export interface LivePlan {
  /** The subgraph that owns the root field, and the subscription sent to it. */
  primary: FetchNode;
  /** The fetches to other subgraphs that complete each event, or undefined when the owner answers it all. */
  rest?: PlanNode;
  /** The root field's key in the answer (its alias, or its name). */
  responseKey: string;
  operationContext: ReturnType<typeof buildOperationContext>;
}

/**
 * Plans subscriptions with Apollo's own query planner: for a subscription it answers a `Subscription`
 * node, a fetch to the subgraph that owns the root field (`primary`) and the plan that fills in the
 * fields of other subgraphs from each event (`rest`). `@apollo/gateway` plans the same way but
 * refuses to execute that node; the live graph executes it (`live-executor.ts`).
 */
export class LivePlanner {
  private readonly planner: QueryPlanner;
  readonly apiSchema: Schema;
  readonly apiGraphQLSchema: GraphQLSchema;
  readonly supergraphGraphQLSchema: GraphQLSchema;

  constructor(supergraph: Supergraph) {
    this.planner = new QueryPlanner(supergraph);
    this.apiSchema = supergraph.apiSchema();
    this.apiGraphQLSchema = this.apiSchema.toGraphQLJSSchema();
    this.supergraphGraphQLSchema = supergraph.schema.toGraphQLJSSchema();
  }

  /** Plans a validated subscription document. */
  plan(document: DocumentNode, operationName: string | undefined): LivePlan {
    const operation = operationFromDocument(this.apiSchema, document, { operationName, validate: false });
    const plan = this.planner.buildQueryPlan(operation);
    if (plan.node?.kind !== 'Subscription') throw new Error('a subscription was planned as no subscription');
    const root = rootFieldOf(document, operationName);
    return {
      primary: this.withCursor(plan.node.primary, root),
      rest: plan.node.rest,
      responseKey: root.alias?.value ?? root.name.value,
      operationContext: buildOperationContext({
        schema: this.apiGraphQLSchema,
        operationDocument: document,
        operationName,
      }),
    };
  }

  /** Whether the subscription root field `name` takes an `after` cursor (and so can resume). */
  resumes(name: string): boolean {
    const field = this.apiGraphQLSchema.getSubscriptionType()?.getFields()[name];
    return Boolean(field?.args.some((arg) => arg.name === 'after'));
  }

  /** The primary fetch, asking also for the event's cursor when its type has one. */
  private withCursor(primary: FetchNode, root: FieldNode): FetchNode {
    const field = this.apiGraphQLSchema.getSubscriptionType()?.getFields()[root.name.value];
    const type = field && getNamedType(field.type);
    if (!isObjectType(type) || !type.getFields().cursor) return primary;
    const document = parse(primary.operation);
    const fetched = rootFieldOf(document, undefined);
    const cursor: FieldNode = {
      kind: Kind.FIELD,
      alias: { kind: Kind.NAME, value: CURSOR_ALIAS },
      name: { kind: Kind.NAME, value: 'cursor' },
    };
    const selections = [...(fetched.selectionSet?.selections ?? []), cursor];
    const withCursor = { ...fetched, selectionSet: { kind: Kind.SELECTION_SET, selections } } as FieldNode;
    const operation = getOperationAST(document)!;
    const rewritten: DocumentNode = {
      ...document,
      definitions: document.definitions.map((definition) =>
        definition === operation
          ? { ...operation, selectionSet: { ...operation.selectionSet, selections: [withCursor] } }
          : definition,
      ),
    };
    return { ...primary, operation: print(rewritten), operationDocumentNode: undefined };
  }
}

/** The one root field of a subscription (graphql-js's validation holds a subscription to one). */
export function rootFieldOf(document: DocumentNode, operationName: string | undefined): FieldNode {
  const operation = getOperationAST(document, operationName);
  const field = operation?.selectionSet.selections.find((selection) => selection.kind === Kind.FIELD);
  if (!field || field.kind !== Kind.FIELD) throw new Error('a subscription without a root field');
  return field;
}
