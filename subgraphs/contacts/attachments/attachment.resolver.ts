import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { ConnectionArgs, PageArgs, toPage, windowOfPage } from '#lib/data/pagination.js';
import { Attachment, AttachmentUploadSlot } from './attachment.entity.js';
import type { AttachmentsContext } from './attachments.context.js';
import { AttachmentConnection, AttachmentPage, DeleteAttachmentPayload } from './attachment.types.js';

@Resolver(() => Attachment)
export class AttachmentResolver {
  @Query(() => AttachmentConnection, { nullable: true, description: 'Attachments of a live contact, newest first' })
  attachments(
    @Arg('contactId', () => ID, { description: 'The contact whose attachments to list' }) contactId: string,
    @Args(() => ConnectionArgs) args: ConnectionArgs,
    @Ctx() ctx: AttachmentsContext,
  ) {
    return ctx.attachments.connection(contactId, args);
  }

  @Query(() => AttachmentPage, {
    nullable: true,
    description: 'The same list as numbered pages, kept for the REST list (`page`/`limit`)',
  })
  async attachmentPage(
    @Arg('contactId', () => ID, { description: 'The contact whose attachments to list' }) contactId: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AttachmentsContext,
  ) {
    const window = windowOfPage(args);
    return toPage(await ctx.attachments.list(contactId, window), window);
  }

  @Query(() => Attachment, { nullable: true, description: 'An attachment of a live contact; null when unknown' })
  attachment(@Arg('id', () => ID, { description: 'The attachment' }) id: string, @Ctx() ctx: AttachmentsContext) {
    return ctx.attachments.find(id);
  }

  @Mutation(() => AttachmentUploadSlot, {
    nullable: true,
    description: 'Step 1 of an upload: checks the contact and reserves a staging key for the bytes',
  })
  reserveAttachmentUpload(
    @Arg('contactId', () => ID, { description: 'The live contact to attach the file to' }) contactId: string,
    @Arg('filename', () => String, { description: 'Name of the file' }) filename: string,
    @Arg('contentType', () => String, {
      nullable: true,
      description: 'Media type of the file; default application/octet-stream',
    })
    contentType: string | null,
    @Ctx() ctx: AttachmentsContext,
  ) {
    return ctx.attachments.reserveUpload(contactId, filename, contentType);
  }

  @Mutation(() => Attachment, {
    nullable: true,
    description:
      'Step 2 of an upload: checks the stored bytes and moves them into place (deletes them, and the reservation, when refused)',
  })
  recordAttachment(
    @Arg('uploadToken', () => String, {
      description: 'The uploadToken of reserveAttachmentUpload, once the bytes are stored',
    })
    uploadToken: string,
    @Arg('contactId', () => ID, {
      nullable: true,
      description: 'The contact the upload was reserved for; when given, a commit of an upload for another is refused',
    })
    contactId: string | null,
    @Arg('sha256', () => String, {
      nullable: true,
      description: 'SHA-256 of the file (hex), as it was sent; when given, the stored bytes must match it',
    })
    sha256: string | null,
    @Arg('filename', () => String, {
      nullable: true,
      description: 'The name of the file as it was sent; when given, it must be the name the upload was reserved with',
    })
    filename: string | null,
    @Ctx() ctx: AttachmentsContext,
  ) {
    return ctx.attachments.record(uploadToken, { contactId, sha256, filename });
  }

  @Mutation(() => Boolean, {
    nullable: true,
    description:
      'Ends a reserved upload that will not be recorded, deleting what was stored of it; false when there is none',
  })
  cancelAttachmentUpload(
    @Arg('uploadToken', () => String, { description: 'The uploadToken of reserveAttachmentUpload' })
    uploadToken: string,
    @Ctx() ctx: AttachmentsContext,
  ) {
    return ctx.attachments.cancel(uploadToken);
  }

  @Mutation(() => DeleteAttachmentPayload.type, {
    nullable: true,
    description: 'Removes the attachment and its bytes permanently',
  })
  async deleteAttachment(
    @Arg('id', () => ID, { description: 'The attachment to remove' }) id: string,
    @Ctx() ctx: AttachmentsContext,
  ) {
    return DeleteAttachmentPayload.of(await ctx.attachments.delete(id));
  }
}
