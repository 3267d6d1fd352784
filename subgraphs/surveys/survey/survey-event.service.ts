import type { EventFeed, Positioned } from '#lib/data/event-feed.js';
import type { SurveyUser } from '../sign-in/auth.types.js';
import type { SurveyEvent } from './survey-event.entity.js';

/** Survey events as they commit, for the surveyor who follows them: their own surveys, or every survey for an admin. */
export class SurveyEventService {
  constructor(
    private readonly feed: EventFeed<SurveyEvent>,
    private readonly user: SurveyUser,
  ) {}

  /** After `after` when given (BAD_USER_INPUT naming `after` when it names no event kept), else from now on. */
  async follow(after?: string | null): Promise<AsyncIterableIterator<Positioned<SurveyEvent>>> {
    const { email, isAdmin } = this.user;
    const from = after ? await this.feed.positionAfter(after) : await this.feed.present();
    return this.feed.follow(from, (event) => isAdmin || (email !== '' && event.ownerEmail === email));
  }
}
