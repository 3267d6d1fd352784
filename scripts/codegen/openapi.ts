import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '#lib/config.js';
import { httpClient } from '#lib/rest/graphql-client.js';
import type { OpenApiDocument } from '#lib/rest/openapi.js';
import { contactsOpenApi } from '#rest-adapters/contacts/index.js';
import { socialOpenApi } from '#rest-adapters/social/index.js';
import { surveysOpenApi } from '#rest-adapters/surveys/index.js';

/**
 * The OpenAPI document of each REST service on default settings (contacts open), from the route
 * tables alone: no gateway is asked and nothing is served. The data folder is a throwaway one,
 * for the file store's signing key that the contacts routes are made with.
 */
export async function openApiDocuments(): Promise<Record<string, OpenApiDocument>> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
  try {
    const config = loadConfig({ DATA_DIR: dataDir });
    const client = httpClient(`http://127.0.0.1:${config.ports.gateway}/graphql`);
    return {
      social: socialOpenApi(client),
      surveys: surveysOpenApi(config, client),
      contacts: contactsOpenApi(config, client),
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A document as `schema/openapi/<service>.json` holds it. */
export const openApiText = (document: OpenApiDocument) => `${JSON.stringify(document, null, 2)}\n`;
