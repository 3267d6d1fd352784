import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';

/**
 * The safelist of the gateway (`TRUSTED_DOCUMENTS`): the documents it runs, by the hex SHA-256 of
 * their text. The manifest is what GraphQL Code Generator's client preset writes with
 * `persistedDocuments: true` (`persisted-documents.json`: `{ "sha256:<hex>": "<document>" }`, the
 * identifier of GraphQL over HTTP's persisted documents appendix, which its documents carry as
 * `__meta__.hash` for the client to send as `documentId`); keys of bare hex, as older presets wrote
 * them, are read too. The hex is the one Apollo's automatic persisted queries send as `sha256Hash`.
 */
export type TrustedDocuments = ReadonlyMap<string, string>;

/** The prefix of a document identifier that names its hash algorithm. */
export const SHA256_PREFIX = 'sha256:';

const SHA256_ID = /^(?:sha256:)?([0-9a-f]{64})$/;

export function documentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Reads and checks a manifest once, at start: a file that cannot be read, is not JSON, or holds a key
 * that is not a hex SHA-256 or a text that does not parse is a problem named here, so that the
 * platform refuses to start rather than refuse every client later.
 */
export function readTrustedDocuments(file: string): { documents: TrustedDocuments } | { problems: string[] } {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = error instanceof SyntaxError ? 'is not valid JSON' : `cannot be read (${(error as Error).message})`;
    return { problems: [`TRUSTED_DOCUMENTS: ${file} ${reason}`] };
  }
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) {
    return { problems: [`TRUSTED_DOCUMENTS: ${file} must hold one JSON object { "<sha256 hex>": "<document>" }`] };
  }
  const problems: string[] = [];
  const documents = new Map<string, string>();
  for (const [key, text] of Object.entries(manifest)) {
    const hash = SHA256_ID.exec(key)?.[1];
    if (!hash) {
      problems.push(
        `TRUSTED_DOCUMENTS: key "${key.slice(0, 80)}" is not a SHA-256 identifier ("sha256:" and 64 lowercase hex digits)`,
      );
      continue;
    }
    if (typeof text !== 'string') {
      problems.push(`TRUSTED_DOCUMENTS: the document of ${key} is not a string`);
      continue;
    }
    if (hash !== documentHash(text)) {
      problems.push(`TRUSTED_DOCUMENTS: key ${key} is not the SHA-256 of its document`);
      continue;
    }
    try {
      parse(text);
    } catch (error) {
      problems.push(`TRUSTED_DOCUMENTS: the document of ${key} is not GraphQL: ${(error as Error).message}`);
      continue;
    }
    documents.set(hash, text);
  }
  return problems.length ? { problems } : { documents };
}
