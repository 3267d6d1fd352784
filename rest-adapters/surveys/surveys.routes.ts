import { z } from 'zod';
import { jsonBody, numberParam, stringParam, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { ifMatchVersion } from '#lib/rest/conditional-requests.js';
import { pageBody } from '#lib/data/pagination.js';
import { graphqlEnum, withRestEnums } from '#lib/rest/rest-enums.js';
import { contentDisposition } from '#lib/http/content-disposition.js';
import {
  assetSchema,
  commitInputSchema,
  exportQuery,
  presignInputSchema,
  presignSchema,
  surveyInputSchema,
  surveyPage,
  surveyQuery,
  surveySchema,
} from './surveys.bodies.js';
import {
  CommitSurveyAssetDocument,
  CreateSurveyDocument,
  PresignSurveyAssetDocument,
  SubmitSurveyDocument,
  SurveyAssetDocument,
  SurveyDocument,
  SurveyExportDocument,
  SurveyPageDocument,
  UpdateSurveyDocument,
} from './operations.generated.js';

const SURVEY_ID = { id: 'Survey id' };

/** An asset as its REST body writes it: `status` in lower case. */
const restAsset = <Asset extends { status: string }>(asset: Asset) => withRestEnums(asset, 'status');

/** A survey as its REST body writes it: its `status` and its assets' in lower case. */
const restSurvey = <Survey extends { status: string; assets: { status: string }[] }>(survey: Survey) => ({
  ...withRestEnums(survey, 'status'),
  assets: survey.assets.map(restAsset),
});

// An exported page shows user text and links to photos; nothing in it may run script or load
// anything but images, even if escaping were ever to miss something.
const EXPORT_CSP =
  "default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/**
 * The documented survey and asset endpoints. Each runs one operation of `operations/` and maps
 * the answer; every rule (sessions, ownership, states, checks of uploads) lives in the subgraph.
 */
export function surveyRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'post',
      path: '/api/surveys',
      summary: 'Create a draft survey (venueName required)',
      created: '/api/surveys/{id}',
      doc: {
        operationId: 'createSurvey',
        tag: 'surveys',
        body: surveyInputSchema,
        answer: { status: 201, description: 'The new draft', json: surveySchema },
      },
      handler: async (req, res) => {
        const { createSurvey } = await run(CreateSurveyDocument, { input: jsonBody(req) }, req);
        res.status(201).json(restSurvey(createSurvey));
      },
    },
    {
      method: 'get',
      path: '/api/surveys',
      summary: 'Paginated list of the surveys the session may see (page, limit, status)',
      list: 'pages',
      doc: {
        operationId: 'listSurveys',
        tag: 'surveys',
        query: surveyQuery,
        answer: { status: 200, description: 'A page of surveys', json: surveyPage },
      },
      handler: async (req, res) => {
        const { surveyPage } = await run(
          SurveyPageDocument,
          {
            page: numberParam(req.query.page),
            limit: numberParam(req.query.limit),
            status: graphqlEnum(stringParam(req.query.status) || undefined),
          },
          req,
        );
        res.json(pageBody({ ...surveyPage, items: surveyPage.items.map(restSurvey) }));
      },
    },
    {
      method: 'get',
      path: '/api/surveys/:id',
      summary: 'Get a survey',
      versioned: true,
      doc: {
        operationId: 'getSurvey',
        tag: 'surveys',
        params: SURVEY_ID,
        answer: { status: 200, description: 'The survey', json: surveySchema },
      },
      handler: async (req, res) => {
        const { survey } = await run(SurveyDocument, { id: req.params.id }, req, { lookup: 'Survey' });
        res.json(restSurvey(survey));
      },
    },
    {
      method: 'put',
      path: '/api/surveys/:id',
      summary: 'Update a draft survey',
      versioned: true,
      doc: {
        operationId: 'updateSurvey',
        tag: 'surveys',
        params: SURVEY_ID,
        body: surveyInputSchema,
        answer: { status: 200, description: 'The survey as changed', json: surveySchema },
        problems: [409],
      },
      handler: async (req, res) => {
        const { updateSurvey } = await run(
          UpdateSurveyDocument,
          { id: req.params.id, input: jsonBody(req), ifVersion: ifMatchVersion(req) },
          req,
        );
        res.json(restSurvey(updateSurvey));
      },
    },
    {
      method: 'post',
      path: '/api/surveys/:id/submit',
      summary: 'Submit a survey (required fields must be filled; it cannot change afterwards)',
      doc: {
        operationId: 'submitSurvey',
        tag: 'surveys',
        params: SURVEY_ID,
        answer: { status: 200, description: 'The submitted survey', json: surveySchema },
        problems: [400, 409],
      },
      handler: async (req, res) => {
        const { submitSurvey } = await run(SubmitSurveyDocument, { id: req.params.id }, req);
        res.json(restSurvey(submitSurvey));
      },
    },
    {
      method: 'post',
      path: '/api/surveys/:id/assets/presign',
      summary: 'Prepare an asset upload ({ filename, contentType, size }); answers where to PUT the bytes',
      doc: {
        operationId: 'createAssetUpload',
        tag: 'assets',
        params: SURVEY_ID,
        body: presignInputSchema,
        answer: { status: 200, description: 'Where to PUT the bytes', json: presignSchema },
        problems: [409],
      },
      handler: async (req, res) => {
        const { presignSurveyAsset: upload } = await run(
          PresignSurveyAssetDocument,
          { surveyId: req.params.id, input: jsonBody(req) },
          req,
        );
        // 200 like the social media upload URL: this answers where to send bytes; the asset exists once committed.
        res.status(200).json({
          assetId: upload.assetId,
          id: upload.assetId,
          uploadUrl: upload.uploadUrl,
          method: upload.method,
          headers: Object.fromEntries(upload.headers.map(({ name, value }) => [name, value])),
          expiresAt: upload.expiresAt,
        });
      },
    },
    {
      method: 'post',
      path: '/api/surveys/:id/assets/commit',
      summary: 'Commit an uploaded asset ({ assetId, sha256? }) after checking the bytes',
      doc: {
        operationId: 'commitAssetUpload',
        tag: 'assets',
        params: SURVEY_ID,
        body: commitInputSchema,
        answer: { status: 200, description: 'The committed asset', json: assetSchema },
        problems: [409],
      },
      handler: async (req, res) => {
        const { commitSurveyAsset } = await run(
          CommitSurveyAssetDocument,
          { surveyId: req.params.id, input: jsonBody(req) },
          req,
        );
        res.json(restAsset(commitSurveyAsset));
      },
    },
    {
      method: 'get',
      path: '/api/surveys/:id/export',
      summary: 'Export a survey (format=html|markdown|whatsapp)',
      doc: {
        operationId: 'exportSurvey',
        tag: 'surveys',
        params: SURVEY_ID,
        query: exportQuery,
        answer: {
          status: 200,
          description: 'The survey as a page (html), markdown, or a chat message (whatsapp, text/plain)',
          content: { 'text/html': z.string(), 'text/markdown': z.string(), 'text/plain': z.string() },
        },
      },
      handler: async (req, res) => {
        const { surveyExport } = await run(
          SurveyExportDocument,
          { id: req.params.id, format: stringParam(req.query.format) ?? null },
          req,
        );
        res.status(200).set({
          'content-type': surveyExport.contentType,
          'content-disposition': contentDisposition(surveyExport.filename, 'inline'),
          'x-content-type-options': 'nosniff',
          ...(surveyExport.format === 'HTML' ? { 'content-security-policy': EXPORT_CSP } : {}),
        });
        res.send(surveyExport.body);
      },
    },
    {
      method: 'get',
      path: '/api/assets/:assetId',
      summary: 'Get an asset: metadata and a short-lived download URL',
      doc: {
        operationId: 'getAsset',
        tag: 'assets',
        params: { assetId: 'Asset id' },
        answer: { status: 200, description: 'The asset', json: assetSchema },
      },
      handler: async (req, res) => {
        const { surveyAsset } = await run(SurveyAssetDocument, { id: req.params.assetId }, req, { lookup: 'Asset' });
        res.json(restAsset(surveyAsset));
      },
    },
  ];
}
