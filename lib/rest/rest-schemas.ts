import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../data/pagination.js';

// Schemas every REST service shares: ids, instants, problems, pages, and what a service answers about itself.

export const idSchema = z
  .string()
  .meta({ description: 'Identifier (a UUID)', example: '0b6f1c3e-5a7d-4f0e-9c1a-2d3e4f5a6b7c' });
export const instantSchema = z
  .string()
  .meta({ format: 'date-time', description: 'An instant, ISO 8601 in UTC', example: '2030-01-31T08:00:00.000Z' });

export const problemSchema = z
  .looseObject({
    type: z.string().meta({ description: 'URI reference naming the kind of problem, e.g. /problems/bad-user-input' }),
    title: z.string().meta({ description: 'Short summary of the kind of problem (the HTTP reason phrase)' }),
    status: z.int().min(400).max(599).meta({ description: 'The HTTP status of the answer' }),
    detail: z.string().meta({ description: 'What went wrong with this request, for a person to read' }),
    code: z.string().meta({
      description: 'The platform error code (BAD_USER_INPUT, NOT_FOUND, CONFLICT...), as GraphQL extensions.code',
    }),
    instance: z.string().optional().meta({ description: 'The request path' }),
    errors: z
      .array(
        z.object({
          field: z.string().meta({ description: 'The field, parameter or body member' }),
          message: z.string(),
        }),
      )
      .optional()
      .meta({ description: 'One entry per input field that was refused' }),
  })
  .meta({
    id: 'Problem',
    description: 'RFC 9457 problem details; more members may follow (e.g. `state` on a conflict)',
  });

/** `page` and `limit` of a REST list (the subgraph checks them: a page from 1, a limit from 1 to 100). */
export const pageQuery = z.object({
  page: z.int().min(1).max(1_000_000).optional().meta({ description: 'Page number, from 1 (default 1)' }),
  limit: z
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .meta({ description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})` }),
});

/** A page of a REST list: `{ data, page, limit, total }` (lib/data/pagination.ts `pageBody`). */
export function pageOf(item: z.ZodType, name: string) {
  return z
    .object({
      data: z.array(item).meta({ description: 'The items of this page' }),
      page: z.int().min(1).meta({ description: 'Number of this page, from 1' }),
      limit: z.int().min(1).max(MAX_PAGE_SIZE).meta({ description: 'Page size asked for' }),
      total: z.int().min(0).meta({ description: 'How many items the whole list holds' }),
      totalExact: z
        .literal(false)
        .optional()
        .meta({ description: 'Present, false, only when total is an estimate (a search with very many matches)' }),
    })
    .meta({ id: `${name}Page`, description: `A page of ${name} items` });
}

// --- What every service answers about itself (lib/rest/rest.ts `serviceInfoRoutes`) ---

/** The body of a health answer, unnamed: each document names its own (`Health`, or a service's, as social's `SocialHealth`). */
export const healthBody = z.object({
  status: z.literal('ok'),
  service: z.string(),
  timestamp: instantSchema,
  checks: z
    .record(z.string(), z.string())
    .meta({ description: 'Each part checked (database, job queue, storage...) and how it is' }),
});

export const healthSchema = healthBody.meta({ id: 'Health', description: 'Every part of the service is healthy' });

export const serviceInfoSchema = z
  .object({
    name: z.string().meta({ description: 'The service' }),
    version: z.string().meta({ description: 'Version of the REST contract' }),
    endpoints: z
      .array(
        z.object({
          method: z.string(),
          path: z.string().meta({ description: 'Path, parameters as {name}' }),
          summary: z.string(),
        }),
      )
      .meta({ description: 'Every endpoint the service serves' }),
    openapi: z.string().meta({ description: 'Path of the OpenAPI 3.1 document' }),
    docs: z.string().meta({ description: 'Path of the API reference page' }),
  })
  .meta({ id: 'ServiceInfo', description: 'API metadata and available endpoints' });
