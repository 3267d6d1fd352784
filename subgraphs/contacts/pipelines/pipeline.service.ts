import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import {
  keysetConnection,
  keysetSql,
  keysetWindow,
  orderByText,
  pageOfQuery,
  type Keyset,
  type KeysetArgs,
  type KeysetConnection,
} from '#lib/data/keyset.js';
import type { Connection, Slice, Window } from '#lib/data/pagination.js';
import { Contact } from '../contact/contact.entity.js';
import type { ContactService } from '../contact/contact.service.js';
import { ContactStage, Pipeline, Stage, StageMove, type StagePlacement } from './pipeline.entity.js';
import { ContactEventType } from '../contact/contact-event.entity.js';
import { recordContactEvent } from '../contact/contact-event.service.js';
import type { MoveInput, PipelineInput } from './pipeline.input.js';

/** The default pipeline first, then the others oldest first. */
const DEFAULT_FIRST: Keyset<Pipeline> = {
  direction: 'asc',
  parts: [
    { column: 'p.is_default', kind: 'trueFirst', of: (pipeline) => pipeline.isDefault },
    { column: 'p.created_at', kind: 'time', of: (pipeline) => pipeline.createdAt },
    { column: 'p.id', kind: 'id', of: (pipeline) => pipeline.id },
  ],
};

/** A contact on a board, with the time it sorts by there: its last move, or its creation when never moved. */
interface BoardEntry {
  id: string;
  boardAt: Date;
  contact: Contact;
}

/** A stage's contacts on the board, most recently moved first. */
const RECENTLY_MOVED_FIRST: Keyset<BoardEntry> = {
  direction: 'desc',
  parts: [
    { column: 'coalesce(cs.moved_at, c.created_at)', kind: 'time', of: (entry) => entry.boardAt },
    { column: 'c.id', kind: 'id', of: (entry) => entry.id },
  ],
};

/** A contact's moves, oldest first. */
const OLDEST_MOVE_FIRST: Keyset<StageMove> = {
  direction: 'asc',
  parts: [
    { column: 'm.moved_at', kind: 'time', of: (move) => move.movedAt },
    { column: 'm.id', kind: 'id', of: (move) => move.id },
  ],
};

/**
 * The stage every live contact without a placement sits in: the first of the default pipeline.
 * Kept in SQL so that board queries need no extra round trip to find it.
 */
const fallbackStage = (schema: string) =>
  `(select s.id from "${schema}".stage s join "${schema}".pipeline p on p.id = s.pipeline_id where p.is_default order by s.position limit 1)`;

/** Pipelines, their stages, where each contact stands, and the moves that brought it there. */
export class PipelineService {
  private readonly schema: string;
  /** Where a contact stands: its placement, or the fallback stage when it has none. */
  private readonly stageOfContact: string;

  constructor(
    private readonly em: EntityManager,
    private readonly contacts: ContactService,
  ) {
    this.schema = String(em.config.get('schema'));
    this.stageOfContact = `coalesce(cs.stage_id, ${fallbackStage(this.schema)})`;
  }

  /** The default pipeline first, then the others in the order they were made, as a keyset connection. */
  async connection(args: KeysetArgs): Promise<Connection<Pipeline>> {
    const window = keysetWindow(DEFAULT_FIRST, args);
    const query = this.em.createQueryBuilder(Pipeline, 'p');
    return pageOfQuery(query, DEFAULT_FIRST, window, () => this.em.count(Pipeline, {}));
  }

  /** The same pipelines as a numbered page (the REST list). */
  async list(window: Window): Promise<Slice<Pipeline>> {
    const [items, total] = await this.em.findAndCount(
      Pipeline,
      {},
      { orderBy: { isDefault: 'desc', createdAt: 'asc', id: 'asc' }, limit: window.limit, offset: window.offset },
    );
    return { items, total };
  }

  async find(id: string): Promise<Pipeline | null> {
    return isUuid(id) ? this.em.findOne(Pipeline, { id }) : null;
  }

  async get(id: string): Promise<Pipeline> {
    const pipeline = await this.find(id);
    if (!pipeline) throw AppError.notFound('Pipeline');
    return pipeline;
  }

  async create(input: PipelineInput): Promise<Pipeline> {
    const name = input.name.trim();
    if (!name) throw AppError.badInput('name', 'must not be empty');
    const stageNames = input.stages.map((stage) => stage.trim());
    if (stageNames.some((stage) => !stage)) throw AppError.badInput('stages', 'stage names must not be empty');
    if (new Set(stageNames.map((stage) => stage.toLowerCase())).size !== stageNames.length) {
      throw AppError.badInput('stages', 'stage names must differ');
    }
    const pipeline = new Pipeline();
    pipeline.name = name;
    try {
      // Stages reference the pipeline by a plain id, so the pipeline row is flushed first.
      await this.em.transactional(async (tx) => {
        tx.persist(pipeline);
        await tx.flush();
        stageNames.forEach((stageName, index) =>
          tx.create(Stage, { pipelineId: pipeline.id, name: stageName, position: index + 1 }),
        );
        await tx.flush();
      });
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) {
        throw new AppError(ErrorCode.CONFLICT, 'A pipeline with this name exists', {
          fields: [{ field: 'name', message: 'is already used' }],
        });
      }
      throw error;
    }
    return pipeline;
  }

  /** Stages of many pipelines in one query, each list in position order. */
  async stagesOf(pipelineIds: readonly string[]): Promise<Map<string, Stage[]>> {
    const stages = await this.em.find(
      Stage,
      { pipelineId: { $in: [...pipelineIds] } },
      { orderBy: { position: 'asc' } },
    );
    const byPipeline = new Map<string, Stage[]>(pipelineIds.map((id) => [id, []]));
    for (const stage of stages) byPipeline.get(stage.pipelineId)?.push(stage);
    return byPipeline;
  }

  /** Live contacts per stage, for many stages in one query. */
  async countsOf(stageIds: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.em.execute<{ stage_id: string; count: string }[]>(
      `select ${this.stageOfContact} as stage_id, count(*) as count
       from "${this.schema}".contact c left join "${this.schema}".contact_stage cs on cs.contact_id = c.id
       where not c.deleted and ${this.stageOfContact} = any(array[?]::uuid[])
       group by 1`,
      [[...stageIds]],
    );
    const counts = new Map<string, number>(stageIds.map((id) => [id, 0]));
    for (const row of rows) counts.set(row.stage_id, Number(row.count));
    return counts;
  }

  /**
   * One keyset page of live contacts for each of many stages (most recently moved first), all at
   * the same arguments (a board asks every stage alike), in two queries whatever the number of
   * stages or contacts: ranked ids past the cursor, then the contacts.
   */
  async contactsOf(stageIds: readonly string[], args: KeysetArgs): Promise<Map<string, KeysetConnection<Contact>>> {
    const window = keysetWindow(RECENTLY_MOVED_FIRST, args);
    const entries = new Map<string, BoardEntry[]>(stageIds.map((id) => [id, []]));
    const page = keysetSql(RECENTLY_MOVED_FIRST, window);
    const rows = stageIds.length
      ? await this.em.execute<{ id: string; stage_id: string; board_at: Date | string }[]>(
          `select id, stage_id, board_at from (
             select c.id, ${this.stageOfContact} as stage_id, coalesce(cs.moved_at, c.created_at) as board_at,
               row_number() over (partition by ${this.stageOfContact} order by ${orderByText(page)}) as rank
             from "${this.schema}".contact c left join "${this.schema}".contact_stage cs on cs.contact_id = c.id
             where not c.deleted and ${this.stageOfContact} = any(array[?]::uuid[])
               ${page.conditions.map((condition) => `and ${condition.sql}`).join(' ')}
           ) ranked
           where rank <= ?
           order by stage_id, rank`,
          [[...stageIds], ...page.conditions.flatMap((condition) => condition.params), page.limit],
        )
      : [];
    const found = rows.length ? await this.contacts.findMany(rows.map((row) => row.id)) : new Map<string, Contact>();
    for (const row of rows) {
      const contact = found.get(row.id);
      if (contact) entries.get(row.stage_id)?.push({ id: row.id, boardAt: new Date(row.board_at), contact });
    }
    const byStage = new Map<string, KeysetConnection<Contact>>();
    for (const [stageId, stageEntries] of entries) {
      byStage.set(
        stageId,
        keysetConnection(RECENTLY_MOVED_FIRST, window, stageEntries, (entry) => entry.contact),
      );
    }
    return byStage;
  }

  /**
   * Moves a contact to a stage and appends the move to its history, both in one transaction.
   * Without `pipelineId` the stage must be in the contact's current pipeline (a stage of another
   * pipeline is a mistake the caller hears about); naming the stage's pipeline switches pipelines.
   */
  async move(contactId: string, input: MoveInput): Promise<StagePlacement> {
    if (!isUuid(contactId)) throw AppError.notFound('Contact');
    if (!isUuid(input.stageId)) throw AppError.notFound('Stage');
    if (input.pipelineId !== undefined && input.pipelineId !== null && !isUuid(input.pipelineId))
      throw AppError.notFound('Pipeline');

    return this.em.transactional(async (tx) => {
      // Locks the contact so that two moves at once cannot both start from the same stage.
      const contact = await tx.findOne(
        Contact,
        { id: contactId, deleted: false },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (!contact) throw AppError.notFound('Contact');
      const stage = await tx.findOne(Stage, { id: input.stageId });
      if (!stage) throw AppError.notFound('Stage');
      if (input.pipelineId && input.pipelineId !== stage.pipelineId) {
        if (!(await tx.count(Pipeline, { id: input.pipelineId }))) throw AppError.notFound('Pipeline');
        throw AppError.badInput('stageId', 'is a stage of another pipeline than pipelineId');
      }

      const placement = await tx.findOne(ContactStage, { contactId });
      const current = placement
        ? { pipelineId: placement.pipelineId, stageId: placement.stageId as string | null, since: placement.movedAt }
        : await this.defaultPlacement(tx, contact);
      if (!input.pipelineId && current.pipelineId && stage.pipelineId !== current.pipelineId) {
        throw AppError.badInput(
          'stageId',
          "is a stage of another pipeline than the contact's; send that pipelineId to switch pipelines",
        );
      }
      if (current.stageId === stage.id) {
        return {
          contactId,
          pipelineId: stage.pipelineId,
          stageId: stage.id,
          fromStageId: stage.id,
          movedAt: current.since,
          move: null,
        };
      }

      // Strictly after the previous move, so the history keeps its order even within one millisecond.
      const movedAt = new Date(Math.max(Date.now(), placement ? placement.movedAt.getTime() + 1 : 0));
      const target =
        placement ?? tx.create(ContactStage, { contactId, pipelineId: stage.pipelineId, stageId: stage.id, movedAt });
      target.pipelineId = stage.pipelineId;
      target.stageId = stage.id;
      target.movedAt = movedAt;
      const move = tx.create(StageMove, {
        contactId,
        pipelineId: stage.pipelineId,
        fromStageId: current.stageId,
        toStageId: stage.id,
        movedAt,
      });
      recordContactEvent(tx, contactId, ContactEventType.MOVED, { fromStageId: current.stageId, toStageId: stage.id });
      await tx.flush();
      return {
        contactId,
        pipelineId: stage.pipelineId,
        stageId: stage.id,
        fromStageId: current.stageId,
        movedAt,
        move,
      };
    });
  }

  /** The moves of a live contact, oldest first, as a keyset connection. */
  async historyConnection(contactId: string, args: KeysetArgs): Promise<Connection<StageMove>> {
    const window = keysetWindow(OLDEST_MOVE_FIRST, args);
    await this.contacts.get(contactId);
    const where = { contactId };
    const query = this.em.createQueryBuilder(StageMove, 'm').where(where);
    return pageOfQuery(query, OLDEST_MOVE_FIRST, window, () => this.em.count(StageMove, where));
  }

  /** The same moves as a numbered page (the REST list). */
  async history(contactId: string, window: Window): Promise<Slice<StageMove>> {
    await this.contacts.get(contactId);
    const [items, total] = await this.em.findAndCount(
      StageMove,
      { contactId },
      { orderBy: { movedAt: 'asc', id: 'asc' }, limit: window.limit, offset: window.offset },
    );
    return { items, total };
  }

  private async defaultPlacement(tx: EntityManager, contact: Contact) {
    const pipeline = await tx.findOne(Pipeline, { isDefault: true });
    const first = pipeline
      ? await tx.findOne(Stage, { pipelineId: pipeline.id }, { orderBy: { position: 'asc' } })
      : null;
    return { pipelineId: pipeline?.id ?? null, stageId: first?.id ?? null, since: contact.createdAt };
  }
}
