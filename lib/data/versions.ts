import { AppError, ErrorCode } from '../errors.js';

/**
 * Row versions: what a REST `ETag` names and what a conditional write (`If-Match`, GraphQL
 * `ifVersion`) is checked against. A versioned row has an integer `version` that goes up by one with
 * every UPDATE of it, kept by a trigger (`versionColumnSql`) rather than by the code that writes:
 * every writer bumps it, the entity manager, a raw statement or a bulk import alike, so a changed
 * row can never keep the version a client read. The entity mirrors the bump in memory
 * (`nextVersion`), so a write answers the version it wrote without reading the row again.
 *
 * The check belongs in the write's transaction, after the row is locked (`FOR UPDATE`): two writers
 * holding the same version then take turns, and the second finds the version moved on.
 */

export const VERSION_DESCRIPTION = 'Goes up by one with every change of the record (its REST ETag)';

export const IF_VERSION_DESCRIPTION =
  'Change only if the record is still at this version (the REST If-Match); otherwise PRECONDITION_FAILED and nothing changes';

/** MikroORM `onUpdate` of a `version` property: the value the trigger writes, known without a read. */
export const nextVersion = (row: { version: number }): number => row.version + 1;

/** Refuses a write whose caller read another version of the row than the one now locked. */
export function checkVersion(current: number, expected: number | null | undefined): void {
  if (expected === null || expected === undefined || expected === current) return;
  throw new AppError(
    ErrorCode.PRECONDITION_FAILED,
    `The record changed since it was read: it is at version ${current}, not ${expected}`,
    { fields: [{ field: 'ifVersion', message: `is ${expected}, but the record is at version ${current}` }] },
  );
}

/**
 * The migration statements that make `table` versioned: its column (existing rows at 1) and the
 * trigger that bumps it on every UPDATE. The function is shared by the schema's versioned tables.
 */
export function versionColumnSql(table: string): string[] {
  return [
    `alter table "${table}" add column "version" integer not null default 1`,
    `create or replace function row_version_bump() returns trigger language plpgsql as $$
      begin
        new.version := old.version + 1;
        return new;
      end $$`,
    `create trigger "${table}_version" before update on "${table}" for each row execute function row_version_bump()`,
  ];
}
