import { queryText } from '#lib/rest/rest.js';
import { graphqlEnumList, restEnum, withGraphQLEnums, withRestEnums } from '#lib/rest/rest-enums.js';
import { withIsoInstants } from '#lib/rest/rest-instants.js';
import { Platform } from './operations.generated.js';

/** A comma-separated query parameter as a list (`status=queued,failed`), or undefined when absent. */
export function listParam(value: unknown): string[] | undefined {
  if (value === undefined || value === '') return undefined;
  return queryText(value)
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/**
 * A post's body (create, update, or the edit of a content item) as the graph takes it: `status` and
 * `platforms` as the graph's enum values, `scheduledAt` as an instant. REST reads platform names in
 * any case and with spaces around (`" Mastodon "`, `X`); a name of no platform is a 400 on `platforms`.
 */
export function postInput(body: Record<string, unknown>): Record<string, unknown> {
  const input = withIsoInstants(withGraphQLEnums(body, 'status'), 'scheduledAt');
  if ('platforms' in input) input.platforms = graphqlEnumList(input.platforms, Platform, 'platforms', 'platforms');
  return input;
}

/** A post, content item or reviewed post as its REST body writes it: `status` and `platforms` in lower case. */
export const restPost = <Item extends { status: string; platforms: readonly string[] }>(item: Item) =>
  withRestEnums(item, 'status', 'platforms');

/** A thing of one platform (an integration, a publish attempt) as its REST body writes it: `status` and `platform` in lower case. */
export const restOfPlatform = <Item extends { status: string; platform: string }>(item: Item) =>
  withRestEnums(item, 'status', 'platform');

/** A media file as its REST body writes it: `status` and `source` in lower case. */
export const restMedia = <Media extends { status: string; source: string }>(media: Media) =>
  withRestEnums(media, 'status', 'source');

/** An audit event as its REST body writes it: `type` and its actor's `type` in lower case. */
export const restEvent = <Event extends { type: string; actor: { type: string } }>(event: Event) => ({
  ...withRestEnums(event, 'type'),
  actor: { ...event.actor, type: restEnum(event.actor.type) },
});
