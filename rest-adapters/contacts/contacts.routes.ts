import { z } from 'zod';
import { pageQuery } from '#lib/rest/rest-schemas.js';
import { pageBody } from '#lib/data/pagination.js';
import { jsonBody, numberParam, stringParam, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { ifMatchVersion } from '#lib/rest/conditional-requests.js';
import { contactInputSchema, contactPage, contactSchema } from './contacts.bodies.js';
import {
  ContactDocument,
  ContactPageDocument,
  CreateContactDocument,
  DeleteContactDocument,
  UpdateContactDocument,
} from './operations.generated.js';

/**
 * The documented contact-record endpoints. Each runs one operation of `operations/` and maps the
 * answer; every rule (validation, soft delete, search) lives in the contacts subgraph.
 */
export function contactRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/contacts',
      summary: 'Paginated contact list with optional full-text search (page, limit, search)',
      list: 'pages',
      doc: {
        operationId: 'listContacts',
        tag: 'contacts',
        query: pageQuery.extend({
          search: z
            .string()
            .optional()
            .meta({ description: 'Full-text search over names, e-mail addresses, companies and tags' }),
        }),
        answer: { status: 200, description: 'A page of live contacts', json: contactPage },
      },
      handler: async (req, res) => {
        const { contactPage } = await run(
          ContactPageDocument,
          {
            page: numberParam(req.query.page),
            limit: numberParam(req.query.limit),
            search: stringParam(req.query.search),
          },
          req,
        );
        res.json(pageBody(contactPage));
      },
    },
    {
      method: 'post',
      path: '/api/contacts',
      summary: 'Create a contact (firstName or email required)',
      created: '/api/contacts/{id}',
      doc: {
        operationId: 'createContact',
        tag: 'contacts',
        body: contactInputSchema,
        answer: { status: 201, description: 'The new contact', json: contactSchema },
        problems: [409],
      },
      handler: async (req, res) => {
        const { createContact } = await run(CreateContactDocument, { input: jsonBody(req) }, req);
        res.status(201).json(createContact);
      },
    },
    {
      method: 'get',
      path: '/api/contacts/:id',
      summary: 'Get a contact',
      versioned: true,
      doc: {
        operationId: 'getContact',
        tag: 'contacts',
        params: { id: 'Contact id' },
        answer: { status: 200, description: 'The contact', json: contactSchema },
      },
      handler: async (req, res) => {
        const { contact } = await run(ContactDocument, { id: req.params.id }, req, { lookup: 'Contact' });
        res.json(contact);
      },
    },
    {
      method: 'put',
      path: '/api/contacts/:id',
      summary: 'Update a contact',
      versioned: true,
      doc: {
        operationId: 'updateContact',
        tag: 'contacts',
        params: { id: 'Contact id' },
        body: contactInputSchema,
        answer: { status: 200, description: 'The contact as changed', json: contactSchema },
        problems: [409],
      },
      handler: async (req, res) => {
        const { updateContact } = await run(
          UpdateContactDocument,
          { id: req.params.id, input: jsonBody(req), ifVersion: ifMatchVersion(req) },
          req,
        );
        res.json(updateContact);
      },
    },
    {
      method: 'delete',
      path: '/api/contacts/:id',
      summary: 'Soft delete a contact',
      versioned: true,
      doc: {
        operationId: 'deleteContact',
        tag: 'contacts',
        params: { id: 'Contact id' },
        answer: { status: 200, description: 'The contact, now with deleted: true', json: contactSchema },
      },
      handler: async (req, res) => {
        const { deleteContact } = await run(
          DeleteContactDocument,
          { id: req.params.id, ifVersion: ifMatchVersion(req) },
          req,
        );
        res.json(deleteContact.contact);
      },
    },
  ];
}
