/**
 * The decisions production cannot leave to a default. Each default below is right on a developer's
 * machine and a door left open once deployed: the embedded issuer's private key lies in DATA_DIR
 * (anyone with the volume or a backup mints any token), sign-in mails (links and tokens) go to the
 * log without SMTP, the contacts book is open to anyone, and subgraphs listening beyond loopback
 * would answer anyone who finds their port. With `NODE_ENV=production` the start is refused until
 * each is decided, and every missing decision is named at once. So is every setting that keeps state
 * inside one process (DESIGN.md, "Running as many instances"), unless `SINGLE_INSTANCE=true` says there
 * is only one: then each is a warning at every start instead.
 */

/** What the checks read: the parsed settings, and whether `CONTACTS_AUTH` was given (its default is `open`). */
export interface ProductionSettings {
  IDENTITY_JWKS_URL?: string;
  DEV_IDENTITY?: 'allow';
  SMTP_URL?: string;
  CONTACTS_AUTH_GIVEN: boolean;
  SUBGRAPH_HOST: string;
  /** The accepted tokens, the one sent first (a comma list rotates it). */
  SUBGRAPH_TOKEN: readonly string[];
  TRUST_PROXY?: string;
  DATABASE_URL?: string;
  STORAGE_URL?: string;
  REDIS_URL?: string;
  ENCRYPTION_KEY?: string;
  SINGLE_INSTANCE?: 'true' | 'false';
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
        'or set DEV_IDENTITY=allow (one instance only, SINGLE_INSTANCE=true) to use the embedded development issuer, whose private key lies in DATA_DIR',
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
  if (!isLoopbackHost(settings.SUBGRAPH_HOST) && !settings.SUBGRAPH_TOKEN.length) {
    problems.push(
      `SUBGRAPH_TOKEN: subgraphs listen on ${settings.SUBGRAPH_HOST} (SUBGRAPH_HOST), beyond this machine; set a shared secret the gateway sends them`,
    );
  }
  if (settings.SINGLE_INSTANCE !== 'true')
    problems.push(
      ...perProcessState(settings).map(
        (state) => `${state}; set it, or SINGLE_INSTANCE=true when exactly one instance of each part runs`,
      ),
    );
  return problems;
}

/**
 * What stays inside one process (or its DATA_DIR) with these settings: right for a single instance,
 * and a wrong answer as soon as a second instance serves the same clients. One line each, naming the setting.
 */
export function perProcessState(settings: ProductionSettings): string[] {
  const state: string[] = [];
  if (!settings.DATABASE_URL)
    state.push('DATABASE_URL: unset, so each instance keeps its own embedded database under its DATA_DIR');
  if (!settings.STORAGE_URL || settings.STORAGE_URL.startsWith('file://'))
    state.push(
      "STORAGE_URL: files are kept on this instance's disk (file://), where no other instance finds them; use s3://",
    );
  if (!settings.REDIS_URL)
    state.push('REDIS_URL: unset, so every rate limit counts per instance (a limit of N allows N on each)');
  if (!settings.ENCRYPTION_KEY)
    state.push(
      'ENCRYPTION_KEY: unset, so each instance seals and signs with a key of its own DATA_DIR, and no other opens ' +
        'its platform tokens, OAuth verifiers, webhook secrets or signed URLs',
    );
  if (!settings.IDENTITY_JWKS_URL && settings.DEV_IDENTITY === 'allow')
    state.push(
      "DEV_IDENTITY=allow: the development issuer's keys lie in DATA_DIR, so a token issued with one instance's keys is refused by another's",
    );
  return state;
}

/** What production allows but an operator must hear about at every start. */
export function productionWarnings(settings: ProductionSettings): string[] {
  const warnings: string[] = [];
  if (settings.SINGLE_INSTANCE === 'true')
    warnings.push(
      ...perProcessState(settings).map(
        (state) => `SINGLE_INSTANCE=true: ${state}. Fine for this one instance; share it before starting a second.`,
      ),
    );
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
