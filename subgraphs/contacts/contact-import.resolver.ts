import { Args, ArgsType, Ctx, Field, Mutation, Resolver } from 'type-graphql';
import type { ContactsContext } from './contacts.context.js';
import { ImportResult } from './contact-import.types.js';

@ArgsType()
class ImportContactsArgs {
  @Field(() => String, { description: 'Storage key of the uploaded CSV file (imports/<uuid>.csv); it is deleted afterwards' })
  fileKey!: string;

  @Field(() => String, { nullable: true, description: 'JSON object from CSV column to contact field; absent: columns are matched by header name' })
  mapping?: string | null;
}

@Resolver()
export class ContactImportResolver {
  @Mutation(() => ImportResult, { description: 'Imports contacts from a stored CSV file; e-mail matches update instead of duplicating' })
  importContacts(@Args(() => ImportContactsArgs) args: ImportContactsArgs, @Ctx() ctx: ContactsContext) {
    return ctx.imports.import(args.fileKey, args.mapping);
  }
}
