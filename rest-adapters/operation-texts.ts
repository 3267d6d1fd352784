import * as contacts from '#rest-adapters/contacts/operations.generated.js';
import * as social from '#rest-adapters/social/operations.generated.js';
import * as surveys from '#rest-adapters/surveys/operations.generated.js';

/**
 * The text of every operation the REST adapters run (their generated `...Document`s, fragments
 * included): with a safelist on, the gateway runs these whatever the manifest holds, since the
 * adapters are part of the platform and reach a gateway deployed apart over HTTP like any client.
 */
export const REST_OPERATION_TEXTS: readonly string[] = [contacts, social, surveys].flatMap((generated) =>
  Object.entries(generated)
    .filter(([name]) => name.endsWith('Document'))
    .map(([, document]) => String(document)),
);
