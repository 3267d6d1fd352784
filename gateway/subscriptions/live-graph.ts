import type { ServiceMap } from '@apollo/gateway';
import type { ApolloServer } from '@apollo/server';
import { Supergraph } from '@apollo/federation-internals';
import {
  GraphQLError,
  OperationTypeNode,
  type FormattedExecutionResult,
  type GraphQLFormattedError,
  type ParseOptions,
  type ValidationRule,
} from 'graphql';
import type { Config } from '#lib/config.js';
import { ErrorCode, formatGraphQLError, httpStatusOf } from '#lib/errors.js';
import type { Safelist } from '#lib/http/document-safelist.js';
import type { Logger } from '#lib/observability/logger.js';
import type { GatewayContext } from '#lib/rest/graphql-client.js';
import { stoppable, type Stoppable } from '#lib/stoppable.js';
import type { LocalSubgraph } from '#lib/subgraph/local-subgraph.js';
import { admissionOf, admit, type Admission, type Admitted, type LiveParams } from './admission.js';
import { liveExecutor, type LiveEvent } from './live-executor.js';
import { openSubscriptions, type LiveTransport } from './live-metrics.js';
import { LivePlanner, rootFieldOf } from './live-plan.js';
import { LiveStreams } from './live-streams.js';
import { resumedAfter } from './resume.js';
import { SharedRuns } from './shared-runs.js';
import { subgraphStreams, type LiveCaller } from './subgraph-streams.js';
import { SubscriptionLimits, type ConnectionSlots } from './subscription-limits.js';

export interface LiveGraphOptions {
  config: Config;
  log: Logger;
  apollo: ApolloServer<GatewayContext>;
  supergraphSdl: string;
  /** The gateway's data sources by subgraph name, filled in as Apollo Gateway builds them. */
  serviceMap: ServiceMap;
  localSubgraphs: Record<string, LocalSubgraph>;
  subgraphUrls: Record<string, string>;
  parseOptions: ParseOptions;
  validationRules: readonly ValidationRule[];
  safelist?: Safelist;
}

/** What a transport does with one request. */
export type LiveAnswer =
  /** Refused before anything ran (a 400 over HTTP, an `error` message over WebSocket). */
  | { kind: 'refused'; errors: GraphQLFormattedError[]; status: number }
  /** A query or a mutation: run as any other (`runOperation`). */
  | { kind: 'operation'; admitted: Admitted }
  /** A subscription: `events.return()` ends it at once (the client left), even between events. */
  | { kind: 'stream'; admitted: Admitted; events: Stoppable<LiveEvent>; operationName?: string };

export interface OpenOptions {
  transport: LiveTransport;
  /** The connection the subscription rides on, counted against its cap. */
  connection?: ConnectionSlots;
  /** SSE's `Last-Event-ID`: resume as `after` would. */
  lastEventId?: string;
}

/**
 * The live graph: the gateway's subscriptions, one function for the three transports. A request is
 * admitted by the rules of queries, counted against the caps, then run by the live executor; every
 * result leaves formatted by the gateway's error rules.
 */
export class LiveGraph {
  readonly streams = new LiveStreams();
  private readonly limits = new SubscriptionLimits();
  private readonly shared = new SharedRuns();
  private readonly planner: LivePlanner;
  private readonly execute: ReturnType<typeof liveExecutor>;
  private readonly admission: Admission;

  constructor(private readonly options: LiveGraphOptions) {
    this.planner = new LivePlanner(Supergraph.build(options.supergraphSdl));
    this.admission = admissionOf({
      schema: this.planner.apiGraphQLSchema,
      parseOptions: options.parseOptions,
      validationRules: options.validationRules,
      safelist: options.safelist,
    });
    this.execute = liveExecutor({
      planner: this.planner,
      serviceMap: options.serviceMap,
      eventsOf: subgraphStreams({
        localSubgraphs: options.localSubgraphs,
        subgraphUrls: options.subgraphUrls,
        subgraphToken: options.config.env.SUBGRAPH_TOKEN[0],
      }),
      formatError: (error) => this.formatError(error),
      log: options.log,
    });
  }

  open(params: LiveParams, caller: LiveCaller, how: OpenOptions): LiveAnswer {
    const admitted = admit(params, this.admission);
    if (Array.isArray(admitted)) return this.refused(admitted);
    if (admitted.type !== OperationTypeNode.SUBSCRIPTION) return { kind: 'operation', admitted };
    if (this.streams.closing) {
      return this.refused([
        new GraphQLError('The gateway is restarting: subscribe again in a moment', {
          extensions: { code: ErrorCode.SERVICE_UNAVAILABLE },
        }),
      ]);
    }
    const release = this.limits.take(caller, how.connection);
    if (release instanceof GraphQLError) return this.refused([release]);
    const root = rootFieldOf(admitted.document, admitted.operationName).name.value;
    const resumed = how.lastEventId && this.planner.resumes(root) ? resumedAfter(admitted, how.lastEventId) : admitted;
    const { transport } = how;
    openSubscriptions.inc({ transport });
    let counted = true;
    // Once, whichever comes first: the stream's end, or the client leaving (maybe before it started).
    const ended = () => {
      if (!counted) return;
      counted = false;
      openSubscriptions.dec({ transport });
      release();
    };
    return {
      kind: 'stream',
      admitted,
      events: stoppable((signal) => this.counted(resumed, caller, ended, signal), ended),
      operationName: admitted.operationName,
    };
  }

  /** Runs a query or mutation sent over a live transport as any HTTP one runs: through Apollo Server. */
  async runOperation(admitted: Admitted, caller: LiveCaller): Promise<FormattedExecutionResult> {
    const response = await this.options.apollo.executeOperation(
      { query: admitted.text, variables: admitted.variables, operationName: admitted.operationName },
      { contextValue: { ...caller } },
    );
    if (response.body.kind !== 'single') return { errors: [{ message: 'incremental delivery is not served here' }] };
    return response.body.singleResult;
  }

  formatError(error: GraphQLError | GraphQLFormattedError): GraphQLFormattedError {
    const formatted = error instanceof GraphQLError ? error.toJSON() : error;
    return formatGraphQLError(formatted, error, (internal) =>
      this.options.log.error({ err: internal }, 'unexpected error in a subscription'),
    );
  }

  private refused(errors: readonly GraphQLError[]): LiveAnswer {
    const formatted = errors.map((error) => this.formatError(error));
    return { kind: 'refused', errors: formatted, status: httpStatusOf(formatted[0]?.extensions?.code) };
  }

  /**
   * The stream, counted while it is open, `ended` when it ends however it ends: the subscriber
   * leaving aborts `signal`, which ends the subgraph's stream and so this one at once.
   */
  private async *counted(
    admitted: Admitted,
    caller: LiveCaller,
    ended: () => void,
    signal: AbortSignal,
  ): AsyncGenerator<LiveEvent> {
    try {
      yield* this.shared.follow(admitted, caller, (runSignal) => this.execute(admitted, caller, runSignal), signal);
    } catch (error) {
      // A subgraph that cannot be reached, or fails: the stream ends with that error, masked.
      this.options.log.warn({ err: error, requestId: caller.requestId }, 'a subscription failed');
      yield {
        result: {
          errors: [
            {
              message: 'The service of this subscription is not answering: subscribe again with your last cursor',
              extensions: { code: ErrorCode.SERVICE_UNAVAILABLE },
            },
          ],
        },
      };
    } finally {
      ended();
    }
  }
}
