import type { IncomingMessage } from 'node:http';

type RoutedRequest = IncomingMessage & { route?: { path?: unknown }; baseUrl?: string; originalUrl?: string };

/**
 * The route pattern that served a request (`/api/contacts/:id`), never its raw path, for metric
 * labels and span names: Express's matched route, else one of the part's fixed mount paths
 * (`/graphql`), else `unmatched`.
 */
export function routePatternOf(req: IncomingMessage, mounts: readonly string[] = []): string {
  const routed = req as RoutedRequest;
  if (typeof routed.route?.path === 'string') return `${routed.baseUrl ?? ''}${routed.route.path}`;
  const path = (routed.originalUrl ?? req.url ?? '').split('?')[0] ?? '';
  return mounts.includes(path) ? path : 'unmatched';
}
