import { isDeepStrictEqual } from 'node:util';
import type { FormattedExecutionResult } from 'graphql';
import { startGateway, type RunningGateway } from '#gateway/gateway.js';
import type { Config } from '#lib/config.js';
import { createLogger } from '#lib/observability/logger.js';
import type { GatewayContext, GraphQLResult } from '#lib/rest/graphql-client.js';
import type { LocalSubgraph, SubgraphOperation, SubgraphRequest } from '#lib/subgraph/local-subgraph.js';
import { REST_OPERATION_TEXTS } from '#rest-adapters/operation-texts.js';

/** One call a gateway made to a subgraph, and what it answered. */
interface SubgraphCall {
  operation: SubgraphOperation;
  request: SubgraphRequest;
  answer?: FormattedExecutionResult;
  thrown?: Error;
}

/** What the next subgraph call answers instead of running: a failure of the subgraph, made on purpose. */
export type Fault = { answer: FormattedExecutionResult } | { thrown: Error };

/**
 * Two gateways over the same subgraphs, to compare the short path with the full path without running
 * anything twice: `short` (GATEWAY_SHORT_PATH=true) calls the real subgraphs and records each call;
 * `full` (GATEWAY_SHORT_PATH=false) gets, for the same operation, the recorded answer of the same
 * subgraph call. A write runs once, and both gateways shape the same subgraph answer, so any
 * difference between their answers is the gateway's. `run` also checks that both sent the subgraph the
 * same call (text, variables, headers: credentials and request id).
 */
export class TwinGateways {
  private calls: SubgraphCall[] = [];
  private fault: Fault | undefined;
  short!: RunningGateway;
  full!: RunningGateway;

  static async start(
    config: Config,
    subgraphs: Record<string, LocalSubgraph>,
    fixedTexts: readonly string[] = REST_OPERATION_TEXTS,
  ): Promise<TwinGateways> {
    const twins = new TwinGateways();
    const logger = createLogger(config);
    const start = (shortPath: 'true' | 'false', locals: Record<string, LocalSubgraph>) =>
      startGateway(
        { config: { ...config, env: { ...config.env, GATEWAY_SHORT_PATH: shortPath } }, logger },
        { port: 0, subgraphUrls: {}, localSubgraphs: locals, restOperations: fixedTexts },
      );
    const map = (wrap: (name: string, subgraph: LocalSubgraph) => LocalSubgraph) =>
      Object.fromEntries(Object.entries(subgraphs).map(([name, subgraph]) => [name, wrap(name, subgraph)]));
    twins.short = await start(
      'true',
      map((_name, subgraph) => twins.recording(subgraph)),
    );
    twins.full = await start(
      'false',
      map((_name, subgraph) => twins.replaying(subgraph)),
    );
    return twins;
  }

  /** The next subgraph call of the short gateway answers `fault` instead of running. */
  failNext(fault: Fault): void {
    this.fault = fault;
  }

  /** Runs one operation on both gateways, and answers both answers (as JSON text) and whether the short path took it. */
  run(
    query: string,
    variables: Record<string, unknown>,
    context: GatewayContext,
  ): Promise<{ short: string; full: string; shortPath: boolean; sameCalls: boolean }> {
    return this.compare(
      () => settle(this.short.client.execute(query, variables, { ...context })),
      () => settle(this.full.client.execute(query, variables, { ...context })),
    );
  }

  private async compare(
    onShort: () => Promise<string>,
    onFull: () => Promise<string>,
  ): Promise<{ short: string; full: string; shortPath: boolean; sameCalls: boolean }> {
    this.calls = [];
    const taken = this.short.shortPaths!.taken;
    const short = await onShort();
    const shortCalls = this.calls;
    this.calls = [...shortCalls];
    const replayed: SubgraphCall[] = [];
    this.onReplay = (call) => replayed.push(call);
    const full = await onFull();
    this.onReplay = undefined;
    const sameCalls =
      replayed.length === shortCalls.length &&
      replayed.every(
        (call, index) =>
          isDeepStrictEqual(call.operation, shortCalls[index].operation) &&
          isDeepStrictEqual(call.request, shortCalls[index].request),
      );
    return { short, full, shortPath: this.short.shortPaths!.taken > taken, sameCalls };
  }

  /** POSTs one body to both gateways' `/graphql`; answers each status, content type and body as they came. */
  async post(
    body: Record<string, unknown>,
    headers: Record<string, string>,
  ): Promise<{ short: string; full: string; shortPath: boolean; sameCalls: boolean }> {
    const send = async (url: string) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return `${response.status} ${response.headers.get('content-type')}\n${await response.text()}`;
    };
    return this.compare(
      () => send(this.short.url),
      () => send(this.full.url),
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.short?.close(), this.full?.close()]);
  }

  private onReplay: ((call: SubgraphCall) => void) | undefined;

  private recording(subgraph: LocalSubgraph): LocalSubgraph {
    return {
      subscribe: (...args) => subgraph.subscribe(...args),
      execute: async (operation, request) => {
        const call: SubgraphCall = { operation: callOf(operation), request: structuredClone(request) };
        this.calls.push(call);
        const fault = this.fault;
        this.fault = undefined;
        if (fault && 'thrown' in fault) {
          call.thrown = fault.thrown;
          throw fault.thrown;
        }
        const answer = fault ? fault.answer : await subgraph.execute(operation, request);
        call.answer = structuredClone(answer);
        return answer;
      },
    };
  }

  private replaying(subgraph: LocalSubgraph): LocalSubgraph {
    return {
      subscribe: (...args) => subgraph.subscribe(...args),
      execute: async (operation, request) => {
        this.onReplay?.({ operation: callOf(operation), request: structuredClone(request) });
        const index = this.calls.findIndex((call) => call.operation.query === operation.query);
        if (index < 0) throw new Error(`the full path made a call the short path did not: ${operation.operationName}`);
        const [call] = this.calls.splice(index, 1);
        if (call.thrown) throw call.thrown;
        return structuredClone(call.answer!);
      },
    };
  }
}

/** What a subgraph is asked (Apollo Gateway's request also carries `http: undefined`, which the subgraph never reads). */
function callOf({ query, variables, operationName }: SubgraphOperation): SubgraphOperation {
  return structuredClone({ query, variables: { ...variables }, operationName });
}

/** An answer as the bytes a caller gets, or the error thrown, named. */
async function settle(answer: Promise<GraphQLResult<unknown>>): Promise<string> {
  try {
    return JSON.stringify(await answer);
  } catch (error) {
    return `thrown: ${(error as Error).message}`;
  }
}
