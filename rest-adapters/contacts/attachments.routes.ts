import { pipeline } from 'node:stream/promises';
import { AppError } from '../../lib/errors.js';
import { readMultipart } from '../../lib/multipart.js';
import { pageBody, type Page } from '../../lib/pagination.js';
import { numberParam, type RestRoute, type RunOperation } from '../../lib/rest.js';
import { contentDisposition, type ObjectStorage } from '../../lib/storage.js';

type Attachment = Record<string, unknown>;
interface UploadSlot {
  uploadToken: string;
  storageKey: string;
  maxBytes: number;
  contentType: string;
}

/** Legacy clients ask for "all attachments" with no paging parameters: answer the largest page. */
const ALL_ON_ONE_PAGE = 100;

/**
 * Attachment bytes never pass through GraphQL: the subgraph checks the contact and hands out a
 * storage key and the size limit, the bytes stream from the request into storage, and the
 * subgraph records them (refusing, and deleting them, when anything is wrong).
 */
export function attachmentRoutes(run: RunOperation, storage: ObjectStorage): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/contacts/:id/attachments',
      summary: 'All attachments of a contact, newest first (page, limit)',
      handler: async (req, res) => {
        const { attachmentPage } = await run<{ attachmentPage: Page<Attachment> }>(
          'AttachmentPage',
          { contactId: req.params.id, page: numberParam(req.query.page), limit: numberParam(req.query.limit) ?? ALL_ON_ONE_PAGE },
          req,
        );
        res.json(pageBody(attachmentPage));
      },
    },
    {
      method: 'post',
      path: '/api/contacts/:id/attachments',
      summary: 'Upload a file attachment (multipart/form-data, field file)',
      handler: async (req, res) => {
        const { file: slot } = await readMultipart(req, {
          fileField: 'file',
          onFile: async (file) => {
            const { reserveAttachmentUpload } = await run<{ reserveAttachmentUpload: UploadSlot }>(
              'ReserveAttachmentUpload',
              { contactId: req.params.id, filename: file.filename || 'file', contentType: file.contentType },
              req,
            );
            await storage.put(reserveAttachmentUpload.storageKey, file.stream, {
              contentType: reserveAttachmentUpload.contentType,
              maxBytes: reserveAttachmentUpload.maxBytes,
            });
            return reserveAttachmentUpload;
          },
          discard: (stored) => storage.delete(stored.storageKey),
        });
        if (!slot) throw AppError.badInput('file', 'is required: send the file as multipart/form-data field "file"');
        try {
          const { recordAttachment } = await run<{ recordAttachment: Attachment }>('RecordAttachment', { uploadToken: slot.uploadToken }, req);
          res.status(201).json(recordAttachment);
        } catch (error) {
          // The subgraph deletes what it refuses; this covers a failure before it could answer.
          await storage.delete(slot.storageKey).catch(() => undefined);
          throw error;
        }
      },
    },
    {
      method: 'get',
      path: '/api/attachments/:id',
      summary: 'Download an attachment file',
      handler: async (req, res) => {
        const { attachment } = await run<{ attachment: (Attachment & { storageKey: string; filename: string; contentType: string }) | null }>(
          'AttachmentDownload',
          { id: req.params.id },
          req,
        );
        if (!attachment) throw AppError.notFound('Attachment');
        const { stream, size } = await storage.open(attachment.storageKey);
        // setHeader, not set: Express would append a charset to text types, changing the stored type.
        res.status(200).setHeader('content-type', attachment.contentType);
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
      handler: async (req, res) => {
        const { deleteAttachment } = await run<{ deleteAttachment: Attachment }>('DeleteAttachment', { id: req.params.id }, req);
        res.json({ ...deleteAttachment, deleted: true });
      },
    },
  ];
}
