import { parseArgs } from 'node:util';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { loadConfig } from '#lib/config.js';
import { Identity } from '#lib/identity.js';
import { CONTACTS_SCOPES } from '#subgraphs/contacts/contacts.scopes.js';
import { SOCIAL_SCOPES } from '#subgraphs/social/access/scopes.js';
import { SURVEYS_SCOPES } from '#subgraphs/surveys/surveys.rules.js';

/** Every scope a service checks: a token carrying any other would grant nothing, so it is refused. */
const SCOPES: readonly string[] = [...SOCIAL_SCOPES, ...CONTACTS_SCOPES, ...SURVEYS_SCOPES];

const USAGE = `
usage: npm run token -- --sub USER_ID [--scopes a,b] [--email E] [--expires 12h]

Prints a bearer token signed by the development issuer (its key lives under DATA_DIR/identity), for
Authorization: Bearer <token>. Without --scopes the token acts with every scope over the user's own
data. With IDENTITY_JWKS_URL set, tokens come from that identity service instead.
--email names the surveyor in the survey service (without it, the token is no surveyor there).

scopes:
  social:   ${SOCIAL_SCOPES.join(' ')}
  contacts: ${CONTACTS_SCOPES.join(' ')}
  surveys:  ${SURVEYS_SCOPES.join(' ')}
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
  const scopes = values.scopes
    ?.split(',')
    .map((scope) => scope.trim())
    .filter(Boolean);
  const unknown = scopes?.filter((scope) => !SCOPES.includes(scope)) ?? [];
  if (unknown.length) {
    console.error(`unknown scope: ${unknown.join(', ')}; the scopes are: ${SCOPES.join(' ')}`);
    process.exit(2);
  }
  const identity = await Identity.create(loadConfig());
  if (!identity.canSign) {
    console.error('IDENTITY_JWKS_URL is set: tokens come from that identity service, not from here');
    process.exit(1);
  }
  process.stdout.write(`${await identity.sign({ sub: values.sub, scopes, email: values.email }, values.expires)}\n`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
