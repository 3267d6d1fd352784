import type { Request } from 'express';
import type { RouteDoc } from '#lib/rest/route-doc.js';
import { eventsOf, lastEventIdOf } from '#lib/rest/event-stream.js';
import { jsonBody, listParam, numberParam, stringParam, type RestRoute } from '#lib/rest/rest.js';
import type {
  Answered,
  FollowOperation,
  OperationVariables,
  RunOperation,
  OperationDocument,
} from '#lib/rest/run-operation.js';
import { isoInstant } from '#lib/rest/rest-instants.js';
import { ifMatchVersion } from '#lib/rest/conditional-requests.js';
import { pageBody } from '#lib/data/pagination.js';
import { graphqlEnum } from '#lib/rest/rest-enums.js';
import {
  postInput,
  restEvent,
  restOfPlatform,
  restPost,
  contentEditSchema,
  contentItemDetailSchema,
  contentItemSchema,
  dailyQuery,
  dailySchema,
  eventPageSchema,
  eventsQuery,
  queuePage,
  queueQuery,
  rescheduleSchema,
  retrySchema,
} from './social.bodies.js';
import {
  ApproveContentItemDocument,
  ContentDailyDocument,
  ContentEventsDocument,
  ContentItemDocument,
  ContentQueueDocument,
  EditContentItemDocument,
  FollowContentEventsDocument,
  RejectContentItemDocument,
  RescheduleContentItemDocument,
  RetryContentItemDocument,
} from './operations.generated.js';

const CONTENT_ID = { contentId: "The content item's (the post's) id" };
const byId = (req: Request) => ({ id: req.params.contentId });

/** `/api/content-ops/*`: queue, daily rollups, audit events and item actions (bearer or API key). */
export function contentOpsRoutes(run: RunOperation, follow: FollowOperation): RestRoute[] {
  /** An action on one item: its operation, and the item in the operation's answer. */
  const action = <Result, Variables>(options: {
    operation: OperationDocument<Result, Variables>;
    itemOf: (data: Answered<Result>) => { status: string; platforms: string[] };
    operationId: string;
    summary: string;
    path: string;
    variables: (req: Request) => OperationVariables<Variables>;
    body?: RouteDoc['body'];
  }): RestRoute => ({
    method: 'post',
    path: options.path,
    summary: options.summary,
    // 409 when the item is not in a state the action applies to (the problem says which it is in).
    doc: {
      operationId: options.operationId,
      tag: 'content-ops',
      params: CONTENT_ID,
      body: options.body,
      answer: { status: 200, description: 'The item after the action', json: contentItemSchema },
      problems: [409],
    },
    handler: async (req, res) => {
      res.json(restPost(options.itemOf(await run(options.operation, options.variables(req), req))));
    },
  });

  return [
    {
      method: 'get',
      path: '/api/content-ops/queue',
      summary: 'Queued, publishing and failed items in due order (page, limit, brandId, status=a,b to choose statuses)',
      list: 'pages',
      doc: {
        operationId: 'listQueue',
        tag: 'content-ops',
        query: queueQuery,
        answer: { status: 200, description: 'A page of content items', json: queuePage },
      },
      handler: async (req, res) => {
        const { contentQueuePage } = await run(
          ContentQueueDocument,
          {
            page: numberParam(req.query.page),
            limit: numberParam(req.query.limit),
            brandId: stringParam(req.query.brandId),
            statuses: graphqlEnum(listParam(req.query.status ?? req.query.statuses)),
          },
          req,
        );
        res.json(pageBody({ ...contentQueuePage, items: contentQueuePage.items.map(restPost) }));
      },
    },
    {
      method: 'get',
      path: '/api/content-ops/daily',
      summary: 'Deterministic daily rollups (from, to as YYYY-MM-DD, timezone IANA, default UTC; brandId)',
      doc: {
        operationId: 'listDailyRollups',
        tag: 'content-ops',
        query: dailyQuery,
        answer: { status: 200, description: 'One rollup per day, every day present', json: dailySchema },
      },
      handler: async (req, res) => {
        const { contentDaily } = await run(
          ContentDailyDocument,
          {
            from: stringParam(req.query.from),
            to: stringParam(req.query.to),
            timezone: stringParam(req.query.timezone),
            brandId: stringParam(req.query.brandId),
          },
          req,
        );
        res.json(contentDaily);
      },
    },
    {
      method: 'get',
      path: '/api/content-ops/events',
      summary: 'Audit events, newest first (limit, cursor, contentId, type)',
      list: { cursorParameter: 'cursor' },
      parameterNames: { after: 'cursor', first: 'limit' },
      doc: {
        operationId: 'listContentEvents',
        tag: 'content-ops',
        query: eventsQuery,
        answer: { status: 200, description: 'Events, newest first', json: eventPageSchema },
      },
      eventStream: {
        description:
          'With `Accept: text/event-stream`: the audit events as they happen, as server-sent events, oldest first: ' +
          "`id:` the event's cursor, `event:` its type, `data:` the event as one item of the list's `data`. " +
          '`contentId` and `type` filter them as they filter the list (`limit` and `cursor` do not apply). ' +
          'A reconnect with `Last-Event-ID` first gets every event after that one (events are kept 7 days), none twice. ' +
          'A comment every 15 s keeps it open; a client that reads nothing for 30 s is disconnected. ' +
          'It ends at shutdown (reconnect with Last-Event-ID), or with an `error` event holding a problem (an expired credential: 401).',
        resumes: true,
        parameterNames: { after: 'Last-Event-ID' },
        events: async (req) => {
          const answers = await follow(
            FollowContentEventsDocument,
            {
              after: lastEventIdOf(req),
              contentId: stringParam(req.query.contentId ?? req.query.itemId),
              type: graphqlEnum(stringParam(req.query.type)),
            },
            req,
          );
          return eventsOf(answers, ({ contentEvents: { cursor, ...event } }) => {
            const item = restEvent(event);
            return { id: cursor, event: item.type, data: item };
          });
        },
      },
      handler: async (req, res) => {
        const { contentEvents } = await run(
          ContentEventsDocument,
          {
            first: numberParam(req.query.limit),
            after: stringParam(req.query.cursor),
            contentId: stringParam(req.query.contentId ?? req.query.itemId),
            type: graphqlEnum(stringParam(req.query.type)),
          },
          req,
        );
        res.json({
          data: contentEvents.nodes.map(restEvent),
          nextCursor: contentEvents.pageInfo.hasNextPage ? contentEvents.pageInfo.endCursor : null,
          total: contentEvents.totalCount,
        });
      },
    },
    {
      method: 'get',
      path: '/api/content-ops/items/:contentId',
      summary: 'One content item with its events and publish attempts',
      versioned: true,
      doc: {
        operationId: 'getContentItem',
        tag: 'content-ops',
        params: CONTENT_ID,
        answer: { status: 200, description: 'The item', json: contentItemDetailSchema },
      },
      handler: async (req, res) => {
        const { contentItem } = await run(ContentItemDocument, { id: req.params.contentId }, req, {
          lookup: 'Content item',
        });
        const attempts = contentItem.publishAttempts.map(restOfPlatform);
        res.json({
          ...restPost(contentItem),
          events: contentItem.events.map(restEvent),
          attempts,
          publishAttempts: attempts,
        });
      },
    },
    {
      method: 'patch',
      path: '/api/content-ops/items/:contentId',
      summary: 'Edit a draft or suggestion draft (content, platforms, mediaIds, scheduledAt)',
      versioned: true,
      doc: {
        operationId: 'updateContentItem',
        tag: 'content-ops',
        params: CONTENT_ID,
        body: contentEditSchema,
        answer: { status: 200, description: 'The item as changed', json: contentItemSchema },
        problems: [409],
      },
      handler: async (req, res) => {
        const { editContentItem } = await run(
          EditContentItemDocument,
          {
            id: req.params.contentId,
            input: postInput(jsonBody(req)),
            ifVersion: ifMatchVersion(req),
          },
          req,
        );
        res.json(restPost(editContentItem));
      },
    },
    action({
      operation: ApproveContentItemDocument,
      itemOf: (data) => data.approveContentItem,
      operationId: 'approveContentItem',
      summary: 'Approve a suggestion draft',
      path: '/api/content-ops/items/:contentId/approve',
      variables: byId,
    }),
    action({
      operation: RejectContentItemDocument,
      itemOf: (data) => data.rejectContentItem,
      operationId: 'rejectContentItem',
      summary: 'Reject a suggestion draft',
      path: '/api/content-ops/items/:contentId/reject',
      variables: byId,
    }),
    action({
      operation: RescheduleContentItemDocument,
      itemOf: (data) => data.rescheduleContentItem,
      operationId: 'rescheduleContentItem',
      summary: 'Reschedule a queued or failed post (body { scheduledAt })',
      path: '/api/content-ops/items/:contentId/reschedule',
      variables: (req) => ({ ...byId(req), scheduledAt: isoInstant(jsonBody(req).scheduledAt, 'scheduledAt') }),
      body: rescheduleSchema,
    }),
    action({
      operation: RetryContentItemDocument,
      itemOf: (data) => data.retryContentItem,
      operationId: 'retryContentItem',
      summary: 'Retry a failed publish (body { force: true } when its outcome is unknown: it may post twice)',
      path: '/api/content-ops/items/:contentId/retry',
      variables: (req) => ({ ...byId(req), force: jsonBody(req).force }),
      body: retrySchema,
    }),
  ];
}
