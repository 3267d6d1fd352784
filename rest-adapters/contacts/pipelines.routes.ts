import { z } from 'zod';
import { CACHE_CONTROL } from '#lib/http/http-answers.js';
import { pageQuery } from '#lib/rest/rest-schemas.js';
import { MAX_PAGE_SIZE, pageBody } from '#lib/data/pagination.js';
import { jsonBody, numberParam, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import {
  boardSchema,
  moveInputSchema,
  pipelinePage,
  pipelineSchema,
  placementSchema,
  stageMovePage,
} from './contacts.bodies.js';
import {
  MoveContactDocument,
  PipelineBoardDocument,
  PipelineDocument,
  PipelinePageDocument,
  StageMovePageDocument,
} from './operations.generated.js';

/** Sales pipelines, the board, moves and their history. The subgraph holds every rule. */
export function pipelineRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/pipeline',
      summary: 'List available sales pipelines with their stages (page, limit)',
      list: 'pages',
      doc: {
        operationId: 'listPipelines',
        tag: 'pipelines',
        query: pageQuery,
        answer: { status: 200, description: 'A page of pipelines', json: pipelinePage },
      },
      cacheControl: CACHE_CONTROL.private,
      handler: async (req, res) => {
        const { pipelinePage } = await run(
          PipelinePageDocument,
          { page: numberParam(req.query.page), limit: numberParam(req.query.limit) },
          req,
        );
        res.json(pageBody(pipelinePage));
      },
    },
    {
      method: 'get',
      path: '/api/pipeline/:pipelineId',
      summary: 'Pipeline details including its ordered stages',
      versioned: true,
      doc: {
        operationId: 'getPipeline',
        tag: 'pipelines',
        params: { pipelineId: 'Pipeline id' },
        answer: { status: 200, description: 'The pipeline', json: pipelineSchema },
      },
      cacheControl: CACHE_CONTROL.private,
      handler: async (req, res) => {
        const { pipeline } = await run(PipelineDocument, { id: req.params.pipelineId }, req, { lookup: 'Pipeline' });
        res.json(pipeline);
      },
    },
    {
      method: 'get',
      path: '/api/pipeline/:pipelineId/board',
      summary: 'Board view: contacts grouped by stage, with counts (limit: contacts shown per stage)',
      doc: {
        operationId: 'getPipelineBoard',
        tag: 'pipelines',
        params: { pipelineId: 'Pipeline id' },
        query: z.object({
          limit: z
            .int()
            .min(1)
            .max(MAX_PAGE_SIZE)
            .optional()
            .meta({ description: 'Contacts shown per stage, 1 to 100 (default 20)' }),
        }),
        answer: { status: 200, description: 'The board', json: boardSchema },
      },
      handler: async (req, res) => {
        const { pipeline } = await run(
          PipelineBoardDocument,
          { id: req.params.pipelineId, first: numberParam(req.query.limit) },
          req,
          { lookup: 'Pipeline' },
        );
        const { board, ...details } = pipeline;
        res.json({
          pipeline: details,
          stages: board.map(({ contactCount, contacts, ...stage }) => ({
            ...stage,
            count: contactCount,
            contacts: contacts.nodes,
          })),
        });
      },
    },
    {
      method: 'put',
      path: '/api/pipeline/:contactId/move',
      summary: 'Move a contact to a stage ({ stageId }, optional pipelineId to switch pipelines)',
      doc: {
        operationId: 'moveContactToStage',
        tag: 'pipelines',
        params: { contactId: 'Contact id' },
        body: moveInputSchema,
        answer: { status: 200, description: 'Where the contact is now', json: placementSchema },
      },
      handler: async (req, res) => {
        const { moveContact } = await run(
          MoveContactDocument,
          { contactId: req.params.contactId, input: jsonBody(req) },
          req,
        );
        const { move, ...placement } = moveContact;
        res.json({ ...placement, toStageId: placement.stageId, moved: move !== null, move });
      },
    },
    {
      method: 'get',
      path: '/api/pipeline/:contactId/history',
      summary: 'Stage movement history of a contact, oldest first (page, limit)',
      list: 'pages',
      doc: {
        operationId: 'listStageHistory',
        tag: 'pipelines',
        params: { contactId: 'Contact id' },
        query: pageQuery,
        answer: { status: 200, description: 'A page of moves', json: stageMovePage },
      },
      handler: async (req, res) => {
        const { stageMovePage } = await run(
          StageMovePageDocument,
          { contactId: req.params.contactId, page: numberParam(req.query.page), limit: numberParam(req.query.limit) },
          req,
        );
        res.json(pageBody(stageMovePage));
      },
    },
  ];
}
