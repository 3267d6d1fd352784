import { AppError } from '../../lib/errors.js';
import { CACHE_CONTROL } from '../../lib/http-answers.js';
import { pageBody, type Page } from '../../lib/pagination.js';
import { jsonBody, numberParam, type RestRoute, type RunOperation } from '../../lib/rest.js';

type Row = Record<string, unknown>;
interface BoardStage {
  id: string;
  name: string;
  position: number;
  contactCount: number;
  contacts: { nodes: Row[] };
}
interface Placement {
  contactId: string;
  pipelineId: string;
  stageId: string;
  fromStageId: string | null;
  movedAt: string;
  move: Row | null;
}

/** Sales pipelines, the board, moves and their history. The subgraph holds every rule. */
export function pipelineRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/pipeline',
      summary: 'List available sales pipelines with their stages (page, limit)',
      cacheControl: CACHE_CONTROL.private,
      handler: async (req, res) => {
        const { pipelinePage } = await run<{ pipelinePage: Page<Row> }>(
          'PipelinePage',
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
      cacheControl: CACHE_CONTROL.private,
      handler: async (req, res) => {
        const { pipeline } = await run<{ pipeline: Row | null }>('Pipeline', { id: req.params.pipelineId }, req);
        if (!pipeline) throw AppError.notFound('Pipeline');
        res.json(pipeline);
      },
    },
    {
      method: 'get',
      path: '/api/pipeline/:pipelineId/board',
      summary: 'Board view: contacts grouped by stage, with counts (limit: contacts shown per stage)',
      handler: async (req, res) => {
        const { pipeline } = await run<{ pipeline: (Row & { board: BoardStage[] }) | null }>(
          'PipelineBoard',
          { id: req.params.pipelineId, first: numberParam(req.query.limit) },
          req,
        );
        if (!pipeline) throw AppError.notFound('Pipeline');
        const { board, ...details } = pipeline;
        res.json({
          pipeline: details,
          stages: board.map(({ contactCount, contacts, ...stage }) => ({ ...stage, count: contactCount, contacts: contacts.nodes })),
        });
      },
    },
    {
      method: 'put',
      path: '/api/pipeline/:contactId/move',
      summary: 'Move a contact to a stage ({ stageId }, optional pipelineId to switch pipelines)',
      handler: async (req, res) => {
        const { moveContact } = await run<{ moveContact: Placement }>('MoveContact', { contactId: req.params.contactId, input: jsonBody(req) }, req);
        const { move, ...placement } = moveContact;
        res.json({ ...placement, toStageId: placement.stageId, moved: move !== null, move });
      },
    },
    {
      method: 'get',
      path: '/api/pipeline/:contactId/history',
      summary: 'Stage movement history of a contact, oldest first (page, limit)',
      handler: async (req, res) => {
        const { stageMovePage } = await run<{ stageMovePage: Page<Row> }>(
          'StageMovePage',
          { contactId: req.params.contactId, page: numberParam(req.query.page), limit: numberParam(req.query.limit) },
          req,
        );
        res.json(pageBody(stageMovePage));
      },
    },
  ];
}
