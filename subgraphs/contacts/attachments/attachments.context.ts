import type { AttachmentService } from './attachment.service.js';

/** What the attachment resolvers use of a request's context (contacts.context.ts makes it). */
export interface AttachmentsContext {
  attachments: AttachmentService;
}
