import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode, type FieldProblem } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import { byCreation, keysetWindow, pageOfQuery, type KeysetArgs } from '#lib/data/keyset.js';
import type { Connection, Slice, Window } from '#lib/data/pagination.js';
import { checkVersion } from '#lib/data/versions.js';
import type { SurveyUser } from '../sign-in/auth.types.js';
import { Survey, SurveyStatus } from './survey.entity.js';
import { SurveyEvent, type SurveyEventKind } from './survey-event.entity.js';
import type { CreateSurveyInput, UpdateSurveyInput } from './survey.input.js';

const NEWEST_FIRST = byCreation<Survey>('s', 'desc');

const TEXT_FIELDS = ['venueName', 'address', 'contactName', 'contactPhone', 'notes', 'contactId'] as const;
type TextField = (typeof TEXT_FIELDS)[number];

/** What a survey must have before it can be submitted. */
const REQUIRED_FOR_SUBMIT = ['venueName', 'address', 'contactName', 'contactPhone', 'capacity'] as const;

/** Surveys by id (malformed ids find none), narrowed by `where`: what a user may see, or nothing for a feed's read. */
export async function surveysById(
  em: EntityManager,
  ids: readonly string[],
  where: FilterQuery<Survey> = {},
): Promise<Map<string, Survey>> {
  const valid = ids.filter(isUuid);
  const found = valid.length ? await em.find(Survey, { ...(where as object), id: { $in: valid } }) : [];
  return new Map(found.map((survey) => [survey.id, survey]));
}

/**
 * The rules of surveys: who sees which (owners their own, admins all), who changes one (only its
 * owner), what a draft needs to be submitted, and that a submitted survey no longer changes.
 * Every change writes its audit event in the same transaction.
 */
export class SurveyService {
  constructor(
    private readonly em: EntityManager,
    private readonly user: SurveyUser,
  ) {}

  /** The surveys this user may see, as a filter. */
  private visible(extra: FilterQuery<Survey> = {}): FilterQuery<Survey> {
    return this.user.isAdmin ? extra : { ...(extra as object), ownerEmail: this.user.email };
  }

  /** `visible`'s rule for a survey read without it (an event feed's, read once for every subscriber). */
  sees(survey: Survey): boolean {
    return this.user.isAdmin || survey.ownerEmail === this.user.email;
  }

  /** Visible surveys newest first, as a keyset connection. */
  async connection(args: KeysetArgs, status?: SurveyStatus | null): Promise<Connection<Survey>> {
    const window = keysetWindow(NEWEST_FIRST, args);
    // `visible` answers a plain filter object, which the query builder takes too.
    const where = this.visible(status ? { status } : {}) as Record<string, unknown>;
    const query = this.em.createQueryBuilder(Survey, 's').where(where);
    return pageOfQuery(query, NEWEST_FIRST, window, () => this.em.count(Survey, where));
  }

  /** The same surveys as a numbered page (the REST list). */
  async list(window: Window, status?: SurveyStatus | null): Promise<Slice<Survey>> {
    const [items, total] = await this.em.findAndCount(Survey, this.visible(status ? { status } : {}), {
      orderBy: { createdAt: 'desc', id: 'desc' },
      limit: window.limit,
      offset: window.offset,
    });
    return { items, total };
  }

  /** A visible survey, or null for an unknown, malformed or someone else's id. */
  async find(id: string): Promise<Survey | null> {
    if (!isUuid(id)) return null;
    return this.em.findOne(Survey, this.visible({ id }));
  }

  async get(id: string): Promise<Survey> {
    const survey = await this.find(id);
    if (!survey) throw AppError.notFound('Survey');
    return survey;
  }

  findMany(ids: readonly string[]): Promise<Map<string, Survey>> {
    return surveysById(this.em, ids, this.visible());
  }

  /** Visible surveys about each of these contacts, newest first. */
  async byContacts(contactIds: readonly string[]): Promise<Map<string, Survey[]>> {
    const valid = contactIds.filter(isUuid);
    const found = valid.length
      ? await this.em.find(Survey, this.visible({ contactId: { $in: valid } }), {
          orderBy: { createdAt: 'desc', id: 'desc' },
        })
      : [];
    const byContact = new Map<string, Survey[]>(contactIds.map((id) => [id, []]));
    for (const survey of found) byContact.get(survey.contactId!)?.push(survey);
    return byContact;
  }

  async create(input: CreateSurveyInput): Promise<Survey> {
    const survey = new Survey();
    survey.ownerEmail = this.user.email;
    const changed = this.apply(survey, input);
    this.requireVenueName(survey);
    await this.em.transactional(async (tx) => {
      tx.persist(survey);
      this.audit(tx, survey, 'created', { fields: changed });
    });
    return survey;
  }

  /** Changes a draft; with `ifVersion`, only while it is still at that version (lib/data/versions.ts). */
  async update(id: string, input: UpdateSurveyInput, ifVersion?: number | null): Promise<Survey> {
    return this.em.transactional(async (tx) => {
      const survey = await this.lockChangeable(tx, id, ifVersion);
      const changed = this.apply(survey, input);
      this.requireVenueName(survey);
      if (changed.length) this.audit(tx, survey, 'updated', { fields: changed });
      return survey;
    });
  }

  async submit(id: string): Promise<Survey> {
    return this.em.transactional(async (tx) => {
      const survey = await this.lockChangeable(tx, id);
      const missing: FieldProblem[] = REQUIRED_FOR_SUBMIT.filter((field) => {
        const value = survey[field];
        return value === null || value === undefined || value === '';
      }).map((field) => ({ field, message: 'is required to submit the survey' }));
      if (missing.length) {
        throw new AppError(
          ErrorCode.BAD_USER_INPUT,
          `The survey cannot be submitted yet; missing: ${missing.map((p) => p.field).join(', ')}`,
          {
            fields: missing,
          },
        );
      }
      survey.status = SurveyStatus.SUBMITTED;
      survey.submittedAt = new Date();
      this.audit(tx, survey, 'submitted', {});
      return survey;
    });
  }

  /** A survey this user may change right now: visible (else 404), theirs (else 403), still a draft (else 409). */
  async changeable(id: string): Promise<Survey> {
    return this.requireChangeable(await this.get(id));
  }

  /** `changeable`, locked for this transaction, so a concurrent submit cannot slip between check and change. */
  private async lockChangeable(tx: EntityManager, id: string, ifVersion?: number | null): Promise<Survey> {
    const survey = isUuid(id)
      ? await tx.findOne(Survey, this.visible({ id }), { lockMode: LockMode.PESSIMISTIC_WRITE })
      : null;
    if (!survey) throw AppError.notFound('Survey');
    checkVersion(survey.version, ifVersion);
    return this.requireChangeable(survey);
  }

  /** Admins review every survey, but only its surveyor changes it; a submitted survey is frozen. */
  private requireChangeable(survey: Survey): Survey {
    if (survey.ownerEmail !== this.user.email) {
      throw new AppError(ErrorCode.FORBIDDEN, 'Only the surveyor who owns this survey may change it');
    }
    if (survey.status !== SurveyStatus.DRAFT) {
      throw new AppError(ErrorCode.CONFLICT, `The survey is ${survey.status} and can no longer be changed`, {
        details: { state: survey.status },
      });
    }
    return survey;
  }

  audit(tx: EntityManager, survey: Survey, kind: SurveyEventKind, data: Record<string, unknown>): void {
    tx.persist(
      Object.assign(new SurveyEvent(), {
        surveyId: survey.id,
        ownerEmail: survey.ownerEmail,
        actorEmail: this.user.email,
        kind,
        data,
      }),
    );
  }

  /** Copies the given fields onto the survey; answers the names of those that changed. */
  private apply(survey: Survey, input: UpdateSurveyInput): string[] {
    const changed: string[] = [];
    for (const field of TEXT_FIELDS) {
      const value = input[field];
      if (value === undefined) continue;
      // Blank text clears a field; a cleared venueName is refused by requireVenueName afterwards.
      const next = typeof value === 'string' ? value.trim() || null : null;
      if (survey[field] !== next) changed.push(field);
      (survey as Record<TextField, string | null>)[field] = next;
    }
    if (input.capacity !== undefined) {
      if (survey.capacity !== input.capacity) changed.push('capacity');
      survey.capacity = input.capacity;
    }
    if (input.amenities !== undefined) {
      const amenities = [...new Set((input.amenities ?? []).map((item) => item.trim()).filter(Boolean))];
      if (amenities.join('\n') !== survey.amenities.join('\n')) changed.push('amenities');
      survey.amenities = amenities;
    }
    return changed;
  }

  private requireVenueName(survey: Survey): void {
    if (!survey.venueName) throw AppError.badInput('venueName', 'is required');
  }
}
