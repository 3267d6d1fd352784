import { z } from 'zod';
import { pipeline } from 'node:stream/promises';
import { receiveUpload } from '#lib/storage/multipart-upload.js';
import { pageQuery } from '#lib/rest/rest-schemas.js';
import { pageBody } from '#lib/data/pagination.js';
import { isIdempotentReplay, type RunOperation } from '#lib/rest/run-operation.js';
import { numberParam, type RestRoute } from '#lib/rest/rest.js';
import { ifNoneMatchHolds } from '#lib/rest/conditional-requests.js';
import { contentDisposition } from '#lib/http/content-disposition.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import { attachmentPage, attachmentSchema, deletedSchema, uploadSchema } from './contacts.bodies.js';
import {
  AttachmentDownloadDocument,
  AttachmentPageDocument,
  CancelAttachmentUploadDocument,
  DeleteAttachmentDocument,
  RecordAttachmentDocument,
  ReserveAttachmentUploadDocument,
} from './operations.generated.js';

/** Legacy clients ask for "all attachments" with no paging parameters: answer the largest page. */
const ALL_ON_ONE_PAGE = 100;

/**
 * Attachment bytes never pass through GraphQL; the route runs the platform's upload protocol
 * (`lib/storage/uploads.ts`): the subgraph checks the contact and reserves the upload (a staging key and the
 * size limit), the bytes stream from the request into that key, and the subgraph commits them
 * (checks, moves into place, records; refusing, and deleting them, when anything is wrong). A request
 * that fails after the reservation cancels it at once; the sweep covers a process that died.
 */
export function attachmentRoutes(run: RunOperation, storage: ObjectStorage, maxBytes: number): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/contacts/:id/attachments',
      summary: 'All attachments of a contact, newest first (page, limit)',
      list: 'pages',
      doc: {
        operationId: 'listAttachments',
        tag: 'attachments',
        params: { id: 'Contact id' },
        query: pageQuery.extend({
          limit: pageQuery.shape.limit.meta({
            description: `Page size, 1 to 100 (default ${ALL_ON_ONE_PAGE}: all on one page)`,
          }),
        }),
        answer: { status: 200, description: 'A page of attachments', json: attachmentPage },
      },
      handler: async (req, res) => {
        const { attachmentPage } = await run(
          AttachmentPageDocument,
          {
            contactId: req.params.id,
            page: numberParam(req.query.page),
            limit: numberParam(req.query.limit) ?? ALL_ON_ONE_PAGE,
          },
          req,
        );
        res.json(pageBody(attachmentPage));
      },
    },
    {
      method: 'post',
      path: '/api/contacts/:id/attachments',
      summary: 'Upload a file attachment (multipart/form-data, field file)',
      created: '/api/attachments/{id}',
      doc: {
        operationId: 'uploadAttachment',
        tag: 'attachments',
        params: { id: 'Contact id' },
        multipart: uploadSchema(`The file (at most ATTACHMENT_MAX_BYTES, ${maxBytes} bytes here)`),
        answer: { status: 201, description: 'The recorded attachment', json: attachmentSchema },
      },
      handler: async (req, res) => {
        const recorded = await receiveUpload(req, storage, {
          fileField: 'file',
          missing: 'is required: send the file as multipart/form-data field "file"',
          reserve: async (file) => {
            const filename = file.filename || 'file';
            const { reserveAttachmentUpload } = await run(
              ReserveAttachmentUploadDocument,
              { contactId: req.params.id, filename, contentType: file.contentType },
              req,
              { withoutIdempotencyKey: true },
            );
            return { ...reserveAttachmentUpload, filename };
          },
          // The commit restates the contact, the file's name and its bytes' digest: what its key covers.
          commit: async (slot, _fields, received) =>
            (
              await run(
                RecordAttachmentDocument,
                {
                  uploadToken: slot.uploadToken,
                  contactId: req.params.id,
                  filename: slot.filename,
                  sha256: received.sha256,
                },
                req,
              )
            ).recordAttachment,
          cancel: (slot) =>
            run(CancelAttachmentUploadDocument, { uploadToken: slot.uploadToken }, req, {
              withoutIdempotencyKey: true,
            }),
          replayed: () => isIdempotentReplay(req),
        });
        res.status(201).json(recorded);
      },
    },
    {
      method: 'get',
      path: '/api/attachments/:id',
      summary: 'Download an attachment file',
      doc: {
        operationId: 'downloadAttachment',
        tag: 'attachments',
        params: { id: 'Attachment id' },
        answer: {
          status: 200,
          description: 'The file, with its stored Content-Type and a Content-Disposition naming it',
          content: { 'application/octet-stream': z.string().meta({ format: 'binary' }) },
        },
      },
      handler: async (req, res) => {
        const { attachment } = await run(AttachmentDownloadDocument, { id: req.params.id }, req, {
          lookup: 'Attachment',
        });
        // An attachment's bytes never change once committed (a new file is a new attachment), so its id
        // is a strong entity tag of them: a client holding the file is answered 304 without reading it.
        const etag = `"${attachment.id}"`;
        if (ifNoneMatchHolds(req.get('if-none-match'), etag)) {
          res.status(304).set('etag', etag).end();
          return;
        }
        const { stream, size } = await storage.open(attachment.storageKey);
        // setHeader, not set: Express would append a charset to text types, changing the stored type.
        res.status(200).setHeader('content-type', attachment.contentType);
        res.set('etag', etag);
        res.set({
          'content-length': String(size),
          'content-disposition': contentDisposition(attachment.filename),
          'x-content-type-options': 'nosniff',
          // Whatever was uploaded (HTML, SVG) runs no script and reaches no origin if a browser renders it.
          'content-security-policy': 'sandbox',
          'cache-control': 'private, no-store',
        });
        await pipeline(stream, res);
      },
    },
    {
      method: 'delete',
      path: '/api/attachments/:id',
      summary: 'Delete an attachment permanently (record and file)',
      doc: {
        operationId: 'deleteAttachment',
        tag: 'attachments',
        params: { id: 'Attachment id' },
        answer: { status: 200, description: 'The attachment that was deleted', json: deletedSchema(attachmentSchema) },
      },
      handler: async (req, res) => {
        const { deleteAttachment } = await run(DeleteAttachmentDocument, { id: req.params.id }, req);
        res.json({ ...deleteAttachment.attachment, deleted: true });
      },
    },
  ];
}
