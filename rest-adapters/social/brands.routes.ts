import { jsonBody, numberParam, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { pageQuery } from '#lib/rest/rest-schemas.js';
import { pageBody } from '#lib/data/pagination.js';
import { brandInputSchema, brandPage, brandSchema } from './social.bodies.js';
import { BrandDocument, BrandPageDocument, CreateBrandDocument } from './operations.generated.js';

/** `/api/brands`: the calling user's brands. */
export function brandRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/brands',
      summary: "List the user's brands (page, limit)",
      list: 'pages',
      doc: {
        operationId: 'listBrands',
        tag: 'brands',
        query: pageQuery,
        answer: { status: 200, description: 'A page of brands', json: brandPage },
      },
      handler: async (req, res) => {
        const { brandPage } = await run(
          BrandPageDocument,
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
      created: '/api/brands/{id}',
      doc: {
        operationId: 'createBrand',
        tag: 'brands',
        body: brandInputSchema,
        answer: { status: 201, description: 'The new brand', json: brandSchema },
        problems: [409],
      },
      handler: async (req, res) => {
        const { createBrand } = await run(CreateBrandDocument, { input: jsonBody(req) }, req);
        res.status(201).json(createBrand);
      },
    },
    {
      method: 'get',
      path: '/api/brands/:brandId',
      summary: "One of the user's brands (where a new brand's Location points)",
      versioned: true,
      doc: {
        operationId: 'getBrand',
        tag: 'brands',
        params: { brandId: 'The brand' },
        answer: { status: 200, description: 'The brand', json: brandSchema },
      },
      handler: async (req, res) => {
        const { brand } = await run(BrandDocument, { id: req.params.brandId }, req, { lookup: 'Brand' });
        res.json(brand);
      },
    },
  ];
}
