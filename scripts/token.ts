import { parseArgs } from 'node:util';
import { exitWithHelpIfAsked } from '../lib/cli.js';
import { loadConfig } from '../lib/config.js';
import { Identity } from '../lib/identity.js';

const USAGE = `
usage: npm run token -- --sub USER_ID [--scopes a,b] [--email E] [--expires 12h]

Prints a bearer token signed by the development issuer (its key lives under DATA_DIR/identity), for
Authorization: Bearer <token>. Without --scopes the token acts with every scope over the user's own
data. With IDENTITY_JWKS_URL set, tokens come from that identity service instead.
`;
exitWithHelpIfAsked(USAGE);

/** `npm run token -- --sub ID [--scopes a,b] [--email E] [--expires 12h]`: a bearer token from the development issuer. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sub: { type: 'string' },
      scopes: { type: 'string' },
      email: { type: 'string' },
      expires: { type: 'string', default: '12h' },
    },
  });
  if (!values.sub) {
    console.error(USAGE.trim());
    process.exit(2);
  }
  const identity = await Identity.create(loadConfig());
  if (!identity.canSign) {
    console.error('IDENTITY_JWKS_URL is set: tokens come from that identity service, not from here');
    process.exit(1);
  }
  const scopes = values.scopes
    ?.split(',')
    .map((scope) => scope.trim())
    .filter(Boolean);
  process.stdout.write(`${await identity.sign({ sub: values.sub, scopes, email: values.email }, values.expires)}\n`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
