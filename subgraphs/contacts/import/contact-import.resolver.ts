import { GraphQLJSONObject } from 'graphql-scalars';
import {
  Arg,
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  ID,
  Int,
  Mutation,
  Query,
  Resolver,
  Root,
  Subscription,
} from 'type-graphql';
import type { ImportContext } from './import.context.js';
import { ContactImport } from './contact-import.entity.js';
import { MAX_ERRORS_PAGE, type ImportRequest } from './contact-import.service.js';
import { ImportResult, ImportRowErrorConnection, ImportUploadSlot } from './contact-import.types.js';

@ArgsType()
class ImportContactsArgs {
  @Field(() => ID, {
    description: 'The uploadId of reserveContactImport, once the bytes are stored; the file is deleted afterwards',
  })
  uploadId!: string;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'CSV column -> contact field (null ignores the column); absent: columns are matched by header name',
  })
  mapping?: Record<string, unknown> | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Check every row and answer what would happen, writing nothing',
  })
  dryRun?: boolean | null;

  @Field(() => String, {
    nullable: true,
    description: 'SHA-256 of the file (hex), as it was sent; when given, the stored bytes must match it',
  })
  sha256?: string | null;
}

@ArgsType()
class ImportErrorsArgs {
  @Field(() => Int, {
    nullable: true,
    description: `Errors to return from the start, 1 to ${MAX_ERRORS_PAGE} (default 100)`,
  })
  first?: number;
  @Field(() => String, { nullable: true, description: 'Cursor of the error after which to start' })
  after?: string;
  @Field(() => Int, { nullable: true, description: `Errors to return from the end, 1 to ${MAX_ERRORS_PAGE}` })
  last?: number;
  @Field(() => String, { nullable: true, description: 'Cursor of the error before which to end' })
  before?: string;
}

@ArgsType()
class StartContactImportArgs {
  @Field(() => ID, { description: 'The uploadId of reserveContactImport, once the bytes are stored' })
  uploadId!: string;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'CSV column -> contact field (null ignores the column); absent: columns are matched by header name',
  })
  mapping?: Record<string, unknown> | null;

  @Field(() => Boolean, { nullable: true, description: 'Check every row and count what would happen, writing nothing' })
  dryRun?: boolean | null;

  @Field(() => String, {
    nullable: true,
    description: 'SHA-256 of the file (hex), as it was sent; when given, the stored bytes must match it',
  })
  sha256?: string | null;
}

@Resolver(() => ContactImport)
export class ContactImportResolver {
  @Mutation(() => ImportResult, {
    nullable: true,
    description:
      'Imports contacts from a stored CSV file and answers once it is done; e-mail matches update instead of ' +
      'duplicating. For large files use startContactImport',
  })
  importContacts(@Args(() => ImportContactsArgs) args: ImportContactsArgs, @Ctx() ctx: ImportContext) {
    return ctx.imports.importAndWait(importRequestOf(args));
  }

  @Mutation(() => ContactImport, {
    nullable: true,
    description: 'Starts a background import of a stored CSV file; follow it with contactImport(id)',
  })
  startContactImport(@Args(() => StartContactImportArgs) args: StartContactImportArgs, @Ctx() ctx: ImportContext) {
    return ctx.imports.start(importRequestOf(args));
  }

  @Query(() => ImportResult, {
    nullable: true,
    description:
      'Waits for an import to end and answers what it did, as importContacts does; an import that failed answers its error. Null when there is none',
  })
  contactImportResult(@Arg('id', () => ID, { description: 'Id of the import' }) id: string, @Ctx() ctx: ImportContext) {
    return ctx.imports.resultOf(id);
  }

  @Query(() => ContactImport, { nullable: true, description: 'An import by id; null when there is none' })
  contactImport(@Arg('id', () => ID, { description: 'Id of the import' }) id: string, @Ctx() ctx: ImportContext) {
    return ctx.imports.get(id);
  }

  @Subscription(() => ContactImport, {
    name: 'contactImport',
    description:
      'An import as it is, then each time it changes (at least once a second while it runs), ending after SUCCEEDED, FAILED or CANCELLED',
    subscribe: ({ args, context }) => (context as ImportContext).imports.follow((args as { id: string }).id),
  })
  followContactImport(
    @Root() job: ContactImport,
    @Arg('id', () => ID, { description: 'Id of the import' }) _id: string,
  ): ContactImport {
    return job;
  }

  @Mutation(() => ContactImport, {
    nullable: true,
    description:
      'Cancels a queued or running import; the batches written before stay. An import already over is answered as it is',
  })
  cancelContactImportJob(
    @Arg('id', () => ID, { description: 'Id of the import' }) id: string,
    @Ctx() ctx: ImportContext,
  ) {
    return ctx.imports.cancelJob(id);
  }

  @Mutation(() => ImportUploadSlot, {
    nullable: true,
    description: 'Step 1 of an import: reserves a staging key for the CSV file',
  })
  reserveContactImport(@Ctx() ctx: ImportContext) {
    return ctx.imports.reserve();
  }

  @Mutation(() => Boolean, {
    nullable: true,
    description: 'Ends a reserved import that will not run, deleting what was stored of it; false when there is none',
  })
  cancelContactImport(
    @Arg('uploadId', () => ID, { description: 'The uploadId of reserveContactImport' }) uploadId: string,
    @Ctx() ctx: ImportContext,
  ) {
    return ctx.imports.cancel(uploadId);
  }

  @FieldResolver(() => String, { nullable: true, description: 'Why the import failed; null unless it did' })
  failure(@Root() job: ContactImport): string | null {
    return job.failure?.message ?? null;
  }

  @FieldResolver(() => ImportRowErrorConnection, { description: 'The row errors, in file order' })
  errors(@Root() job: ContactImport, @Args(() => ImportErrorsArgs) args: ImportErrorsArgs, @Ctx() ctx: ImportContext) {
    return ctx.imports.errors(job, args);
  }
}

/** The request of either import mutation, as the service takes it. */
function importRequestOf(args: ImportContactsArgs | StartContactImportArgs): ImportRequest {
  return { uploadId: args.uploadId, mapping: args.mapping, dryRun: args.dryRun ?? false, sha256: args.sha256 };
}
