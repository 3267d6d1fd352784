import { pageQuery } from '#lib/rest/rest-schemas.js';
import { pageBody } from '#lib/data/pagination.js';
import { jsonBody, numberParam, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { ifMatchVersion } from '#lib/rest/conditional-requests.js';
import { deletedSchema, noteInputSchema, notePage, noteSchema } from './contacts.bodies.js';
import {
  CreateNoteDocument,
  DeleteNoteDocument,
  NoteDocument,
  NotePageDocument,
  UpdateNoteDocument,
} from './operations.generated.js';

const NOTE_PARAMS = { contactId: 'Contact id', noteId: 'Note id' };

/** Notes of a contact. Every rule (ownership, soft-deleted contacts, validation) is the subgraph's. */
export function noteRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/contacts/:id/notes',
      summary: 'Paginated notes of a contact, newest first (page, limit)',
      list: 'pages',
      doc: {
        operationId: 'listNotes',
        tag: 'notes',
        params: { id: 'Contact id' },
        query: pageQuery,
        answer: { status: 200, description: 'A page of notes', json: notePage },
      },
      handler: async (req, res) => {
        const { notePage } = await run(
          NotePageDocument,
          { contactId: req.params.id, page: numberParam(req.query.page), limit: numberParam(req.query.limit) },
          req,
        );
        res.json(pageBody(notePage));
      },
    },
    {
      method: 'post',
      path: '/api/contacts/:id/notes',
      summary: 'Add a note ({ body })',
      created: '/api/contacts/{contactId}/notes/{id}',
      doc: {
        operationId: 'createNote',
        tag: 'notes',
        params: { id: 'Contact id' },
        body: noteInputSchema,
        answer: { status: 201, description: 'The new note', json: noteSchema },
      },
      handler: async (req, res) => {
        const { createNote } = await run(CreateNoteDocument, { contactId: req.params.id, input: jsonBody(req) }, req);
        res.status(201).json(createNote);
      },
    },
    {
      method: 'get',
      path: '/api/contacts/:contactId/notes/:noteId',
      summary: 'Get a note',
      versioned: true,
      doc: {
        operationId: 'getNote',
        tag: 'notes',
        params: NOTE_PARAMS,
        answer: { status: 200, description: 'The note', json: noteSchema },
      },
      handler: async (req, res) => {
        const { note } = await run(NoteDocument, { contactId: req.params.contactId, id: req.params.noteId }, req);
        res.json(note);
      },
    },
    {
      method: 'put',
      path: '/api/contacts/:contactId/notes/:noteId',
      summary: 'Update a note ({ body })',
      versioned: true,
      doc: {
        operationId: 'updateNote',
        tag: 'notes',
        params: NOTE_PARAMS,
        body: noteInputSchema,
        answer: { status: 200, description: 'The note as changed', json: noteSchema },
      },
      handler: async (req, res) => {
        const { updateNote } = await run(
          UpdateNoteDocument,
          {
            contactId: req.params.contactId,
            id: req.params.noteId,
            input: jsonBody(req),
            ifVersion: ifMatchVersion(req),
          },
          req,
        );
        res.json(updateNote);
      },
    },
    {
      method: 'delete',
      path: '/api/contacts/:contactId/notes/:noteId',
      summary: 'Delete a note permanently',
      versioned: true,
      doc: {
        operationId: 'deleteNote',
        tag: 'notes',
        params: NOTE_PARAMS,
        answer: { status: 200, description: 'The note that was deleted', json: deletedSchema(noteSchema) },
      },
      handler: async (req, res) => {
        const { deleteNote } = await run(
          DeleteNoteDocument,
          { contactId: req.params.contactId, id: req.params.noteId, ifVersion: ifMatchVersion(req) },
          req,
        );
        res.json({ ...deleteNote.note, deleted: true });
      },
    },
  ];
}
