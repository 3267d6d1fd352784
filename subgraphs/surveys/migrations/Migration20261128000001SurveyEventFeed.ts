import { eventChannelOf, eventLogSql } from '#lib/data/event-feed.js';
import { Migration } from '#lib/data/database.js';

/**
 * The survey audit trail becomes a feed that subscriptions follow (`surveyEvents`): a sequence that
 * orders it, the surveyor who owns the survey on each event (a surveyor follows their own surveys,
 * checked per event without reading the survey), and the feed's columns and trigger
 * (lib/data/event-feed.ts). Events written before get the owner their survey has.
 */
export class Migration20261128000001SurveyEventFeed extends Migration {
  override name = 'Migration20261128000001SurveyEventFeed';

  override up(): void {
    this.addSql('alter table survey_event add column seq bigint generated always as identity unique');
    this.addSql('alter table survey_event add column owner_email text');
    this.addSql('update survey_event as e set owner_email = s.owner_email from survey as s where s.id = e.survey_id');
    for (const statement of eventLogSql('survey_event', eventChannelOf('surveys'))) this.addSql(statement);
  }
}
