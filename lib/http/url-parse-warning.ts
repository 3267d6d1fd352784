import { parse } from 'node:url';

/**
 * Settles Node's `url.parse()` deprecation warning (DEP0169) once, silently: called by every part that
 * serves GraphQL through Apollo's Express integration before it serves (the gateway, a subgraph port).
 *
 * Until a call from outside node_modules has printed that warning, Node 24 decides on every
 * `url.parse()` called from inside node_modules whether to print it, by walking up to 100 stack
 * frames (nodejs/node#60991, not yet in Node 24). Apollo's Express integration
 * (`@as-integrations/express5`) calls `url.parse` on every GraphQL request the gateway and the
 * subgraphs serve: about 20 µs each, measured as 2.5 % of the gateway's CPU per `contact(id)`. The
 * platform's own code never calls `url.parse`; this one call, made here with deprecation warnings
 * muted for its length, only sets Node's "already warned" flag.
 */
export function settleUrlParseWarning(): void {
  if (settled) return;
  settled = true;
  const muted = process.noDeprecation;
  process.noDeprecation = true;
  try {
    parse('/');
  } finally {
    process.noDeprecation = muted;
  }
}

let settled = false;
