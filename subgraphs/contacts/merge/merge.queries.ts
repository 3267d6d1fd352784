import type { EntityManager } from '#lib/data/database.js';
import { Contact } from '../contact/contact.entity.js';
import { READ_FIELDS } from '../contact/contact.queries.js';

/** The SQL of merges for one schema; ids lists go as uuid[] literals (`{a,b}`). */
export interface MergeQueries {
  /** Soft deletes the merged contacts into the survivor; `?` the survivor, the time (twice), the merged ids. */
  retire: string;
  /** Gives merged contacts back (those still merged into the survivor); `?` the time, the ids, the survivor. */
  restore: string;
  /** Sets the survivor's fields; `?` first name, last name, e-mail, phone, company, tags (JSON), the time, the id. */
  updateSurvivor: string;
  /** Moves the rows of `table` from the merged contacts to the survivor; `?` the survivor, the merged ids. Rows: id, from. */
  move: (table: 'note' | 'attachment' | 'stage_move') => string;
  /** Moves rows back to where they came from, where they still are on the survivor; `?` {id: from} (JSON), the survivor. */
  moveBack: (table: 'note' | 'attachment' | 'stage_move') => string;
  /** The stage placements of contacts; `?` the ids. */
  stages: string;
  /** Gives a placement to another contact; `?` the new contact, the old one. */
  takeStage: string;
  /** Puts a placement back as it was; `?` contact, pipeline, stage, time. */
  putStage: string;
  /** Drops a contact's placement when it is still the one given; `?` contact, stage, time. */
  dropStage: string;
  /** The contacts merged into each of the given (merges still standing, through merges of merges); `?` the ids. */
  mergedInto: string;
  /** For each contact given, the live contact it is or went into (column `start`, then the contact's); `?` the ids. */
  survivors: string;
}

const bySchema = new Map<string, MergeQueries>();

export function mergeQueries(em: EntityManager): MergeQueries {
  const meta = em.getMetadata(Contact);
  const schema = meta.schema ?? 'contacts';
  const columns = READ_FIELDS.map((field) => `c."${meta.properties[field].fieldNames[0]}" as "${field}"`).join(', ');
  let queries = bySchema.get(schema);
  if (queries) return queries;
  const t = (table: string) => `"${schema}"."${table}"`;
  // A note carries a version (its ETag): its contact changes, so does the version.
  const bump = (table: string) => (table === 'note' ? ', version = r.version + 1' : '');
  queries = {
    retire: `update ${t('contact')} set deleted = true, merged_into = ?, deleted_at = ?, updated_at = ?,
      version = version + 1 where id = any(?::uuid[])`,
    restore: `update ${t('contact')} set deleted = false, merged_into = null, deleted_at = null, updated_at = ?,
      version = version + 1 where id = any(?::uuid[]) and merged_into = ? returning id`,
    updateSurvivor: `update ${t('contact')} set first_name = ?, last_name = ?, email = ?, phone = ?, company = ?,
      tags = array(select jsonb_array_elements_text(?::jsonb)), updated_at = ?, version = version + 1 where id = ?`,
    move: (
      table,
    ) => `with moving as (select id, contact_id from ${t(table)} where contact_id = any(?::uuid[]) for update)
      update ${t(table)} r set contact_id = ?${bump(table)} from moving where r.id = moving.id
      returning r.id, moving.contact_id as "from"`,
    moveBack: (table) => `update ${t(table)} r set contact_id = d.value::uuid${bump(table)}
      from jsonb_each_text(?::jsonb) d where r.id = d.key::uuid and r.contact_id = ?`,
    stages: `select contact_id as "contactId", pipeline_id as "pipelineId", stage_id as "stageId", moved_at as "movedAt"
      from ${t('contact_stage')} where contact_id = any(?::uuid[])`,
    takeStage: `update ${t('contact_stage')} set contact_id = ? where contact_id = ?`,
    putStage: `insert into ${t('contact_stage')} (contact_id, pipeline_id, stage_id, moved_at) values (?, ?, ?, ?)
      on conflict (contact_id) do nothing`,
    dropStage: `delete from ${t('contact_stage')} where contact_id = ? and stage_id = ? and moved_at = ?`,
    mergedInto: `with recursive merged (root, id) as (
        select merged_into, id from ${t('contact')} where merged_into = any(?::uuid[])
        union all select merged.root, c.id from ${t('contact')} c join merged on c.merged_into = merged.id)
      select root, id from merged order by root, id`,
    // Bounded: a chain of merges is short, and a cycle (which merges cannot make) would stop here.
    survivors: `with recursive chain (start, id, depth) as (
        select id, id, 0 from ${t('contact')} where id = any(?::uuid[])
        union all select chain.start, c.merged_into, chain.depth + 1 from chain join ${t('contact')} c on c.id = chain.id
        where c.merged_into is not null and chain.depth < 50)
      select chain.start, ${columns} from chain join ${t('contact')} c on c.id = chain.id and not c.deleted`,
  };
  bySchema.set(schema, queries);
  return queries;
}

/** A list of ids as a uuid[] literal: an array bind value would be spread into placeholders. */
export function uuidArray(ids: readonly string[]): string {
  return `{${ids.join(',')}}`;
}
