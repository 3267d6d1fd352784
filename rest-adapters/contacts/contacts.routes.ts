import { AppError } from '../../lib/errors.js';
import { pageBody, type Page } from '../../lib/pagination.js';
import { jsonBody, numberParam, stringParam, type RestRoute, type RunOperation } from '../../lib/rest.js';

type Contact = Record<string, unknown>;

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
      handler: async (req, res) => {
        const { contactPage } = await run<{ contactPage: Page<Contact> }>(
          'ContactPage',
          { page: numberParam(req.query.page), limit: numberParam(req.query.limit), search: stringParam(req.query.search) },
          req,
        );
        res.json(pageBody(contactPage));
      },
    },
    {
      method: 'post',
      path: '/api/contacts',
      summary: 'Create a contact (firstName or email required)',
      handler: async (req, res) => {
        const { createContact } = await run<{ createContact: Contact }>('CreateContact', { input: jsonBody(req) }, req);
        res.status(201).json(createContact);
      },
    },
    {
      method: 'get',
      path: '/api/contacts/:id',
      summary: 'Get a contact',
      handler: async (req, res) => {
        const { contact } = await run<{ contact: Contact | null }>('Contact', { id: req.params.id }, req);
        if (!contact) throw AppError.notFound('Contact');
        res.json(contact);
      },
    },
    {
      method: 'put',
      path: '/api/contacts/:id',
      summary: 'Update a contact',
      handler: async (req, res) => {
        const { updateContact } = await run<{ updateContact: Contact }>('UpdateContact', { id: req.params.id, input: jsonBody(req) }, req);
        res.json(updateContact);
      },
    },
    {
      method: 'delete',
      path: '/api/contacts/:id',
      summary: 'Soft delete a contact',
      handler: async (req, res) => {
        const { deleteContact } = await run<{ deleteContact: Contact }>('DeleteContact', { id: req.params.id }, req);
        res.json(deleteContact);
      },
    },
  ];
}
