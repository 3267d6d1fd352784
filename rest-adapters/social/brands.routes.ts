import type { Request } from 'express';
import { numberParam, runOperation, type RestRoute } from '../../lib/rest.js';
import type { SocialRouteContext } from './index.js';
import { pickBody } from './rest.helpers.js';

type Brand = Record<string, unknown>;

/** `/api/brands`: the calling user's brands. */
export function brandRoutes({ client, operations }: SocialRouteContext): RestRoute[] {
  const run = <Data>(name: string, variables: Record<string, unknown>, req: Request) => runOperation<Data>(client, operations[name], variables, req);

  return [
    {
      method: 'get',
      path: '/api/brands',
      summary: "List the user's brands (page, limit)",
      handler: async (req, res) => {
        const { brandPage } = await run<{ brandPage: { items: Brand[]; page: number; limit: number; total: number } }>(
          'BrandPage',
          { page: numberParam(req.query.page), limit: numberParam(req.query.limit) },
          req,
        );
        res.json({ data: brandPage.items, page: brandPage.page, limit: brandPage.limit, total: brandPage.total });
      },
    },
    {
      method: 'post',
      path: '/api/brands',
      summary: 'Create a brand (name required; timezone optional)',
      handler: async (req, res) => {
        const { createBrand } = await run<{ createBrand: Brand }>('CreateBrand', { input: pickBody(req, ['name', 'timezone']) }, req);
        res.status(201).json(createBrand);
      },
    },
  ];
}
