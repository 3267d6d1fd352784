import type { Router } from 'express';
import type { GraphQLClient } from './graphql-client.js';
import { readiness, type HealthQuery } from './health-routes.js';
import { listen, type PartPort } from '../http/http.js';
import { EventStreams } from './event-stream.js';
import { createRestApp, type RestRoute } from './rest.js';
import type { Deps, RunningPart } from '../service.js';

/** What makes one REST service itself; everything else about serving it is the same for all three. */
export interface RestServiceDefinition {
  /** Its name in logs and metrics (`contacts`); the running part is `<name>-rest`. */
  name: string;
  /** The health operations behind its `/health` and `/readyz`. */
  health: HealthQuery;
  /** Every route of its REST contract, in matching order. */
  routes: RestRoute[];
  /** Routers that read the raw request body themselves (signed uploads), mounted before JSON parsing. */
  routers?: Router[];
  /** Releases what the service holds beyond its HTTP server (rate-limit stores), after the server closed. */
  release?: () => Promise<void>;
}

/**
 * Serves one REST service on its port: ready once its subgraph answers with the database up, not ready
 * from the moment shutdown begins, then drained and released.
 */
export async function startRestService(
  deps: Pick<Deps, 'config' | 'logger'>,
  options: { port: PartPort; client: GraphQLClient },
  service: RestServiceDefinition,
): Promise<RunningPart> {
  const eventStreams = new EventStreams();
  const ready = readiness(options.client, String(service.health.readinessOperation), service.health.field);
  const app = createRestApp({
    name: service.name,
    config: deps.config,
    logger: deps.logger,
    routes: service.routes,
    routers: service.routers,
    isReady: () => ready.check(),
    eventStreams,
  });
  const server = await listen(app, options.port, deps.config.env.HOST);
  return {
    name: `${service.name}-rest`,
    url: server.url,
    close: async () => {
      ready.shutDown();
      // Event streams never finish by themselves: they end first, and their clients reconnect with Last-Event-ID.
      eventStreams.endAll();
      await server.close();
      await service.release?.();
    },
  };
}
