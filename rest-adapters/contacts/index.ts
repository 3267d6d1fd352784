import type { Readable } from 'node:stream';
import { DEFAULT_REST_PORTS, type Config } from '#lib/config.js';
import { apiReferenceRoutes } from '#lib/rest/api-reference.js';
import type { GraphQLClient } from '#lib/rest/graphql-client.js';
import type { PartPort } from '#lib/http/http.js';
import { openApiDocument, type OpenApiDocument } from '#lib/rest/openapi.js';
import type { ApiDescription } from '#lib/rest/route-doc.js';
import { ContactsHealthDocument, ContactsReadinessDocument } from './operations.generated.js';
import { healthRoutes, type HealthQuery } from '#lib/rest/health-routes.js';
import { operationRunner, subscriptionRunner } from '#lib/rest/run-operation.js';
import { serviceInfoRoutes, type RestRoute } from '#lib/rest/rest.js';
import { startRestService } from '#lib/rest/rest-service.js';
import type { Deps, RunningPart } from '#lib/service.js';
import { createStorage } from '#lib/storage/create-storage.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import { attachmentRoutes } from './attachments.routes.js';
import { contactImportRoutes } from './contact-import.routes.js';
import { contactExportRoutes, httpExports, inProcessExports, type ExportReader } from './contact-export.routes.js';
import { contactRoutes } from './contacts.routes.js';
import { duplicateRoutes } from './duplicates.routes.js';
import { mergeRoutes } from './merges.routes.js';
import { noteRoutes } from './notes.routes.js';
import { pipelineRoutes } from './pipelines.routes.js';

const HEALTH: HealthQuery = {
  service: 'contact-management',
  field: 'contactsHealth',
  healthOperation: ContactsHealthDocument,
  readinessOperation: ContactsReadinessDocument,
};

/** The contact management API as its OpenAPI document introduces it; credentials only with CONTACTS_AUTH=required. */
function contactsApi(config: Config): ApiDescription {
  const required = config.env.CONTACTS_AUTH === 'required';
  return {
    title: 'Contact management',
    localPort: { port: DEFAULT_REST_PORTS.contacts, variable: 'CONTACTS_REST_PORT' },
    tags: {
      contacts: 'People and companies: search, create, update, soft delete, CSV import and export',
      notes: 'Notes written on a contact',
      attachments: 'Files attached to a contact',
      pipelines: 'Sales pipelines, their stages and board, and the moves of a contact between stages',
    },
    description:
      'Contacts (search, soft delete), notes, attachments, sales pipelines and stage moves, CSV import and export. ' +
      'Errors are RFC 9457 problem details. ' +
      (required
        ? 'Every /api route but GET /api needs a bearer token with contacts.read (reads), contacts.write (changes), contacts.import or contacts.export.'
        : 'No credentials are needed (CONTACTS_AUTH=open).'),
    ...(required
      ? {
          securitySchemes: {
            BearerAuth: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'JWT',
              description: 'A token of the identity service',
            },
          },
          securityOf: (route) => (route.path.startsWith('/api/') ? [{ BearerAuth: [] }] : []),
        }
      : {}),
  };
}

/** Every route of the contact management REST contract, in matching order. */
function contactsRestRoutes(
  client: GraphQLClient,
  storage: ObjectStorage,
  config: Config,
  exports: ExportReader,
): RestRoute[] {
  const run = operationRunner(client);
  const routes: RestRoute[] = [
    // /health and /readyz of this service check its database: see lib/rest/health-routes.ts.
    ...serviceInfoRoutes('contact-management', () => routes),
    ...apiReferenceRoutes(contactsApi(config), () => routes),
    ...healthRoutes(run, HEALTH),
    ...contactImportRoutes(run, subscriptionRunner(client), storage),
    ...contactExportRoutes(run, exports),
    // Before contactRoutes: /api/contacts/duplicates is no contact id.
    ...duplicateRoutes(run),
    ...mergeRoutes(run),
    ...contactRoutes(run),
    ...noteRoutes(run),
    ...attachmentRoutes(run, storage, config.env.ATTACHMENT_MAX_BYTES),
    ...pipelineRoutes(run),
  ];
  return routes;
}

/** The service's OpenAPI document without serving it (`npm run schema`): the routes are listed, not run. */
export function contactsOpenApi(config: Config, client: GraphQLClient): OpenApiDocument {
  return openApiDocument(
    contactsApi(config),
    contactsRestRoutes(client, createStorage(config), config, exportReaderOf(config, {})),
  );
}

export async function startContactsRest(
  deps: Pick<Deps, 'config' | 'logger'>,
  options: {
    port: PartPort;
    client: GraphQLClient;
    /** The contacts subgraph's GraphQL URL when it runs in this process (its port serves the export's bytes). */
    contactsSubgraphUrl?: string;
    /** Reads an export from the contacts subgraph of this process without HTTP (`inProcessExports`). */
    contactExports?: (grant: string) => Readable | null;
  },
): Promise<RunningPart> {
  return startRestService(deps, options, {
    name: 'contacts',
    health: HEALTH,
    routes: contactsRestRoutes(
      options.client,
      createStorage(deps.config),
      deps.config,
      exportReaderOf(deps.config, options),
    ),
  });
}

/**
 * Where exports are read: CONTACTS_SUBGRAPH_URL when the contacts subgraph runs elsewhere, else the
 * one of this process, in process when it was handed over, else over HTTP at its URL.
 */
function exportReaderOf(
  config: Config,
  local: { contactsSubgraphUrl?: string; contactExports?: (grant: string) => Readable | null },
): ExportReader {
  const elsewhere = config.env.CONTACTS_SUBGRAPH_URL;
  if (!elsewhere && local.contactExports) return inProcessExports(local.contactExports);
  return httpExports(elsewhere ?? local.contactsSubgraphUrl, config.env.SUBGRAPH_TOKEN[0]);
}
