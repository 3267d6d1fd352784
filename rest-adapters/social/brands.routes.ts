import { numberParam, type RestRoute, type RunOperation } from '../../lib/rest.js';
import { pageBody, type Page } from '../../lib/pagination.js';
import { pickBody } from './rest.helpers.js';

type Brand = Record<string, unknown>;

/** `/api/brands`: the calling user's brands. */
export function brandRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/brands',
      summary: "List the user's brands (page, limit)",
      handler: async (req, res) => {
        const { brandPage } = await run<{ brandPage: Page<Brand> }>(
          'BrandPage',
          { page: numberParam(req.query.page), limit: numberParam(req.query.limit) },
          req,
        );
        res.json(pageBody(brandPage));
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
