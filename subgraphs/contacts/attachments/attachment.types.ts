import { ConnectionType, PageType } from '#lib/data/pagination.js';
import { Attachment } from './attachment.entity.js';
import { DeletePayloadType } from '#lib/subgraph/delete-payload.js';

export const AttachmentConnection = ConnectionType(Attachment, 'Attachment');
export const AttachmentPage = PageType(Attachment, 'Attachment');

export const DeleteAttachmentPayload = DeletePayloadType(Attachment, 'Attachment');
