import type { Request } from 'express';
import { AppError } from '../../lib/errors.js';
import { jsonBody, numberParam, stringParam, type RestRoute, type RunOperation } from '../../lib/rest.js';
import { pageBody, type Page } from '../../lib/pagination.js';
import { listParam, pickBody } from './rest.helpers.js';

type Item = Record<string, unknown>;

/** `/api/content-ops/*`: queue, daily rollups, audit events and item actions (bearer or API key). */
export function contentOpsRoutes(run: RunOperation): RestRoute[] {
  const action = (name: string, field: string, summary: string, path: string, variables: (req: Request) => Record<string, unknown> = () => ({})): RestRoute => ({
    method: 'post',
    path,
    summary,
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
      handler: async (req, res) => {
        const input = pickBody(req, ['content', 'platforms', 'mediaIds', 'scheduledAt']);
        const { editContentItem } = await run<{ editContentItem: Item }>('EditContentItem', { id: req.params.contentId, input }, req);
        res.json(editContentItem);
      },
    },
    action('ApproveContentItem', 'approveContentItem', 'Approve a suggestion draft', '/api/content-ops/items/:contentId/approve'),
    action('RejectContentItem', 'rejectContentItem', 'Reject a suggestion draft', '/api/content-ops/items/:contentId/reject'),
    action('RescheduleContentItem', 'rescheduleContentItem', 'Reschedule a queued or failed post (body { scheduledAt })', '/api/content-ops/items/:contentId/reschedule', (req) => ({
      scheduledAt: jsonBody(req).scheduledAt ?? null,
    })),
    action('RetryContentItem', 'retryContentItem', 'Retry a failed publish (body { force: true } when its outcome is unknown: it may post twice)', '/api/content-ops/items/:contentId/retry', (req) => ({
      force: jsonBody(req).force ?? null,
    })),
  ];
}
