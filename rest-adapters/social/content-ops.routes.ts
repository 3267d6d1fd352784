import type { Request } from 'express';
import { AppError } from '../../lib/errors.js';
import type { RouteDoc } from '../../lib/openapi.js';
import { jsonBody, numberParam, stringParam, type RestRoute, type RunOperation } from '../../lib/rest.js';
import { pageBody, type Page } from '../../lib/pagination.js';
import { listParam } from './rest.helpers.js';
import {
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
} from './social.bodies.js';

const CONTENT_ID = { contentId: "The content item's (the post's) id" };

type Item = Record<string, unknown>;

/** `/api/content-ops/*`: queue, daily rollups, audit events and item actions (bearer or API key). */
export function contentOpsRoutes(run: RunOperation): RestRoute[] {
  const action = (
    name: string,
    field: string,
    summary: string,
    path: string,
    variables: (req: Request) => Record<string, unknown> = () => ({}),
    body?: RouteDoc['body'],
  ): RestRoute => ({
    method: 'post',
    path,
    summary,
    // 409 when the item is not in a state the action applies to (the problem says which it is in).
    doc: { params: CONTENT_ID, body, answer: { status: 200, description: 'The item after the action', json: contentItemSchema }, problems: [409] },
    handler: async (req, res) => {
      const data = await run<Record<string, Item>>(name, { id: req.params.contentId, ...variables(req) }, req);
      res.json(data[field]);
    },
  });

  return [
    {
      method: 'get',
      path: '/api/content-ops/queue',
      summary: 'Queued, publishing and failed items in due order (page, limit, brandId, status=a,b to choose statuses)',
      doc: { query: queueQuery, answer: { status: 200, description: 'A page of content items', json: queuePage } },
      handler: async (req, res) => {
        const { contentQueuePage } = await run<{ contentQueuePage: Page<Item> }>(
          'ContentQueue',
          {
            page: numberParam(req.query.page),
            limit: numberParam(req.query.limit),
            brandId: stringParam(req.query.brandId),
            statuses: listParam(req.query.status ?? req.query.statuses),
          },
          req,
        );
        res.json(pageBody(contentQueuePage));
      },
    },
    {
      method: 'get',
      path: '/api/content-ops/daily',
      summary: 'Deterministic daily rollups (from, to as YYYY-MM-DD, timezone IANA, default UTC; brandId)',
      doc: { query: dailyQuery, answer: { status: 200, description: 'One rollup per day, every day present', json: dailySchema } },
      handler: async (req, res) => {
        const { contentDaily } = await run<{ contentDaily: unknown }>(
          'ContentDaily',
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
      doc: { query: eventsQuery, answer: { status: 200, description: 'Events, newest first', json: eventPageSchema } },
      handler: async (req, res) => {
        const { contentEvents } = await run<{
          contentEvents: { nodes: Item[]; pageInfo: { hasNextPage: boolean; endCursor: string | null }; totalCount: number };
        }>(
          'ContentEvents',
          {
            first: numberParam(req.query.limit),
            after: stringParam(req.query.cursor),
            contentId: stringParam(req.query.contentId ?? req.query.itemId),
            type: stringParam(req.query.type),
          },
          req,
        );
        res.json({
          data: contentEvents.nodes,
          nextCursor: contentEvents.pageInfo.hasNextPage ? contentEvents.pageInfo.endCursor : null,
          total: contentEvents.totalCount,
        });
      },
    },
    {
      method: 'get',
      path: '/api/content-ops/items/:contentId',
      summary: 'One content item with its events and publish attempts',
      doc: { params: CONTENT_ID, answer: { status: 200, description: 'The item', json: contentItemDetailSchema } },
      handler: async (req, res) => {
        const { contentItem } = await run<{ contentItem: (Item & { publishAttempts: unknown[] }) | null }>('ContentItem', { id: req.params.contentId }, req);
        if (!contentItem) throw AppError.notFound('Content item');
        res.json({ ...contentItem, attempts: contentItem.publishAttempts });
      },
    },
    {
      method: 'patch',
      path: '/api/content-ops/items/:contentId',
      summary: 'Edit a draft or suggestion draft (content, platforms, mediaIds, scheduledAt)',
      doc: { params: CONTENT_ID, body: contentEditSchema, answer: { status: 200, description: 'The item as changed', json: contentItemSchema }, problems: [409] },
      handler: async (req, res) => {
        const { editContentItem } = await run<{ editContentItem: Item }>('EditContentItem', { id: req.params.contentId, input: jsonBody(req) }, req);
        res.json(editContentItem);
      },
    },
    action('ApproveContentItem', 'approveContentItem', 'Approve a suggestion draft', '/api/content-ops/items/:contentId/approve'),
    action('RejectContentItem', 'rejectContentItem', 'Reject a suggestion draft', '/api/content-ops/items/:contentId/reject'),
    action(
      'RescheduleContentItem',
      'rescheduleContentItem',
      'Reschedule a queued or failed post (body { scheduledAt })',
      '/api/content-ops/items/:contentId/reschedule',
      (req) => ({ scheduledAt: jsonBody(req).scheduledAt }),
      rescheduleSchema,
    ),
    action('RetryContentItem', 'retryContentItem', 'Retry a failed publish', '/api/content-ops/items/:contentId/retry'),
  ];
}
