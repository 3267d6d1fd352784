/**
 * The decisions production cannot leave to a default. Each default below is right on a developer's
 * machine and a door left open once deployed: the embedded issuer's private key lies in DATA_DIR
 * (anyone with the volume or a backup mints any token), sign-in mails (links and tokens) go to the
 * log without SMTP, the contacts book is open to anyone, and subgraphs listening beyond loopback
 * would answer anyone who finds their port. With `NODE_ENV=production` the start is refused until
 * each is decided, and every missing decision is named at once.
 */

/** What the checks read: the parsed settings, and whether `CONTACTS_AUTH` was given (its default is `open`). */
export interface ProductionSettings {
  IDENTITY_JWKS_URL?: string;
  DEV_IDENTITY?: 'allow';
  SMTP_URL?: string;
  CONTACTS_AUTH_GIVEN: boolean;
  SUBGRAPH_HOST: string;
  SUBGRAPH_TOKEN?: string;
  TRUST_PROXY?: string;
}

/** Loopback addresses: a subgraph listening there is reached only from its own machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}

/** Every production decision not made, one line each (empty: the start may go on). */
export function productionProblems(settings: ProductionSettings): string[] {
  const problems: string[] = [];
  if (!settings.IDENTITY_JWKS_URL && settings.DEV_IDENTITY !== 'allow') {
    problems.push(
      'IDENTITY_JWKS_URL: set it (with IDENTITY_ISSUER and IDENTITY_AUDIENCE) to verify tokens against your identity service, ' +
        'or set DEV_IDENTITY=allow to use the embedded development issuer, whose private key lies in DATA_DIR',
    );
  }
  if (!settings.SMTP_URL) {
    problems.push('SMTP_URL: production sends sign-in mail over SMTP; it never writes a sign-in link to the log');
  }
  if (!settings.CONTACTS_AUTH_GIVEN) {
    problems.push(
      'CONTACTS_AUTH: set it explicitly, `open` (the contacts book answers anyone) or `required` (bearer tokens with contacts scopes)',
    );
  }
  if (!isLoopbackHost(settings.SUBGRAPH_HOST) && !settings.SUBGRAPH_TOKEN) {
    problems.push(
      `SUBGRAPH_TOKEN: subgraphs listen on ${settings.SUBGRAPH_HOST} (SUBGRAPH_HOST), beyond this machine; set a shared secret the gateway sends them`,
    );
  }
  return problems;
}

/** What production allows but an operator must hear about at every start. */
export function productionWarnings(settings: ProductionSettings): string[] {
  const warnings: string[] = [];
  if (!settings.IDENTITY_JWKS_URL && settings.DEV_IDENTITY === 'allow') {
    warnings.push(
      'DEV_IDENTITY=allow: production is using the embedded development issuer; anyone who can read DATA_DIR (or ' +
        'a backup of it) can sign any token. Set IDENTITY_JWKS_URL instead.',
    );
  }
  // Not a refusal: a part that clients reach directly is right without it. But deployments almost
  // always put a load balancer or ingress in front, and then nothing else says the limits are wrong.
  if (!settings.TRUST_PROXY) {
    warnings.push(
      'TRUST_PROXY is unset: the client of a request is whoever opened the connection. Behind a load balancer or ingress ' +
        'that is the proxy, so every client counts as one for the per-client limits (sign-in mail, review links, ' +
        'Idempotency-Key records of anonymous callers). Set TRUST_PROXY to the proxies in front (1 for one hop, or ' +
        'their addresses), or to 0 when clients connect directly.',
    );
  }
  return warnings;
}
