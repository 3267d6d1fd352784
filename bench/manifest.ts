import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { documentHash } from '#lib/trusted-documents.js';

/** A frontend's document of the manifest: the fields of REST's contact body, asked for by `documentId`. */
const CONTACT_BY_ID =
  'query ContactById($id: ID!) { contact(id: $id) { id firstName lastName email phone company tags deleted createdAt updatedAt } }';

/**
 * Writes a manifest of trusted documents (`TRUSTED_DOCUMENTS`) holding `contact(id)` into `dir`, as
 * GraphQL Code Generator's client preset writes one, and answers its path and the document's id.
 */
export function writeContactManifest(dir: string): { file: string; documentId: string } {
  const documentId = `sha256:${documentHash(CONTACT_BY_ID)}`;
  const file = path.join(dir, 'persisted-documents.json');
  writeFileSync(file, JSON.stringify({ [documentId]: CONTACT_BY_ID }));
  return { file, documentId };
}
