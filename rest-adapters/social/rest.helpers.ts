import { queryText } from '../../lib/rest/rest.js';
import { restEnum, withRestEnums } from '../../lib/rest/rest-enums.js';

/** A comma-separated query parameter as a list (`status=queued,failed`), or undefined when absent. */
export function listParam(value: unknown): string[] | undefined {
  if (value === undefined || value === '') return undefined;
  return queryText(value)
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** A post, content item, reviewed post or integration as its REST body writes it: `status` in lower case. */
export const restStatus = <Item extends { status: string }>(item: Item) => withRestEnums(item, 'status');

/** A media file as its REST body writes it: `status` and `source` in lower case. */
export const restMedia = <Media extends { status: string; source: string }>(media: Media) =>
  withRestEnums(media, 'status', 'source');

/** An audit event as its REST body writes it: `type` and its actor's `type` in lower case. */
export const restEvent = <Event extends { type: string; actor: { type: string } }>(event: Event) => ({
  ...withRestEnums(event, 'type'),
  actor: { ...event.actor, type: restEnum(event.actor.type) },
});
