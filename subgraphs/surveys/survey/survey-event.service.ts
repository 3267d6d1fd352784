import type { KeysetArgs } from '#lib/data/keyset.js';
import type { EventConnection, EventFeed, EventVisibility, Positioned } from '#lib/data/event-feed.js';
import type { SurveyUser } from '../sign-in/auth.types.js';
import type { SurveyEvent } from './survey-event.entity.js';
import type { Survey } from './survey.entity.js';

/**
 * Survey events for the surveyor who reads them, as history or as they commit: their own surveys,
 * or every survey for an admin.
 */
export class SurveyEventService {
  constructor(
    private readonly feed: EventFeed<SurveyEvent, Survey>,
    private readonly user: SurveyUser,
  ) {}

  /** The survey the feed read along with `event`, whoever's (`null`: none then), or `undefined` when it did not read the event. */
  surveyReadWith(event: SurveyEvent): Survey | null | undefined {
    return this.feed.subjectOf(event);
  }

  /** A page of the trail, oldest first, its cursors the stream's: read the history, then `follow` after the last. */
  history(args: KeysetArgs): Promise<EventConnection<SurveyEvent>> {
    return this.feed.page(args, this.visible().where);
  }

  /** After `after` when given (BAD_USER_INPUT naming `after` when it names no event kept), else from now on. */
  async follow(after?: string | null): Promise<AsyncIterableIterator<Positioned<SurveyEvent>>> {
    const from = after ? await this.feed.positionAfter(after) : await this.feed.present();
    return this.feed.follow(from, this.visible().keep);
  }

  /**
   * The events of the surveys this user owns (an event keeps its survey's owner), every event for an
   * admin; a caller without an e-mail address sees none.
   */
  private visible(): EventVisibility<SurveyEvent> {
    const { email, isAdmin } = this.user;
    if (isAdmin) return { where: [], keep: () => true };
    if (email === '') return { where: [{ sql: 'false', params: [] }], keep: () => false };
    return { where: [{ sql: 'e.owner_email = ?', params: [email] }], keep: (event) => event.ownerEmail === email };
  }
}
