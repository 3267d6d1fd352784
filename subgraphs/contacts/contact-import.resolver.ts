import { Arg, Args, ArgsType, Ctx, Field, ID, Mutation, Resolver } from 'type-graphql';
import type { ContactsContext } from './contacts.context.js';
import { ImportResult, ImportUploadSlot } from './contact-import.types.js';

@ArgsType()
class ImportContactsArgs {
  @Field(() => ID, {
    description: 'The uploadId of reserveContactImport, once the bytes are stored; the file is deleted afterwards',
  })
  uploadId!: string;

  @Field(() => String, {
    nullable: true,
    description: 'JSON object from CSV column to contact field; absent: columns are matched by header name',
  })
  mapping?: string | null;
}

@Resolver()
export class ContactImportResolver {
  @Mutation(() => ImportResult, {
    nullable: true,
    description: 'Imports contacts from a stored CSV file; e-mail matches update instead of duplicating',
  })
  importContacts(@Args(() => ImportContactsArgs) args: ImportContactsArgs, @Ctx() ctx: ContactsContext) {
    return ctx.imports.import(args.uploadId, args.mapping);
  }

  @Mutation(() => ImportUploadSlot, {
    nullable: true,
    description: 'Step 1 of an import: reserves a staging key for the CSV file',
  })
  reserveContactImport(@Ctx() ctx: ContactsContext) {
    return ctx.imports.reserve();
  }

  @Mutation(() => Boolean, {
    nullable: true,
    description: 'Ends a reserved import that will not run, deleting what was stored of it; false when there is none',
  })
  cancelContactImport(
    @Arg('uploadId', () => ID, { description: 'The uploadId of reserveContactImport' }) uploadId: string,
    @Ctx() ctx: ContactsContext,
  ) {
    return ctx.imports.cancel(uploadId);
  }
}
