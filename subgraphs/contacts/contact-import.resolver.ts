import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { AppError } from '../../lib/errors.js';
import { notACursor } from '../../lib/data/pagination.js';
import type { ContactsContext } from './contacts.context.js';
import { ContactImport } from './contact-import.entity.js';
import { ImportResult, ImportRowErrorConnection, ImportUploadSlot } from './contact-import.types.js';

/** Row errors one page may hold: `errors.csv` walks a million of them in pages this size. */
const MAX_ERRORS_PAGE = 1000;

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

  @Field(() => Boolean, {
    nullable: true,
    description: 'Check every row and answer what would happen, writing nothing',
  })
  dryRun?: boolean | null;
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
}

const ERROR_CURSOR = /^e:(\d{1,10})$/;
const errorCursor = (position: number) => Buffer.from(`e:${position}`).toString('base64url');

function positionOf(cursor: string | null | undefined): number {
  if (!cursor) return 0;
  const match = ERROR_CURSOR.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) throw notACursor();
  return Number(match[1]);
}

@Resolver(() => ContactImport)
export class ContactImportResolver {
  @Mutation(() => ImportResult, {
    nullable: true,
    description:
      'Imports contacts from a stored CSV file and answers once it is done; e-mail matches update instead of duplicating. For large files use startContactImport',
  })
  importContacts(@Args(() => ImportContactsArgs) args: ImportContactsArgs, @Ctx() ctx: ContactsContext) {
    return ctx.imports.importAndWait({ uploadId: args.uploadId, mapping: args.mapping, dryRun: args.dryRun ?? false });
  }

  @Mutation(() => ContactImport, {
    nullable: true,
    description: 'Starts a background import of a stored CSV file; follow it with contactImport(id)',
  })
  startContactImport(@Args(() => StartContactImportArgs) args: StartContactImportArgs, @Ctx() ctx: ContactsContext) {
    return ctx.imports.start({ uploadId: args.uploadId, mapping: args.mapping, dryRun: args.dryRun ?? false });
  }

  @Query(() => ContactImport, { nullable: true, description: 'An import by id; null when there is none' })
  contactImport(@Arg('id', () => ID, { description: 'Id of the import' }) id: string, @Ctx() ctx: ContactsContext) {
    return ctx.imports.get(id);
  }

  @Mutation(() => ContactImport, {
    nullable: true,
    description:
      'Cancels a queued or running import; the batches written before stay. An import already over is answered as it is',
  })
  cancelContactImportJob(
    @Arg('id', () => ID, { description: 'Id of the import' }) id: string,
    @Ctx() ctx: ContactsContext,
  ) {
    return ctx.imports.cancelJob(id);
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

  @FieldResolver(() => String, { nullable: true, description: 'Why the import failed; null unless it did' })
  failure(@Root() job: ContactImport): string | null {
    return job.failure?.message ?? null;
  }

  @FieldResolver(() => ImportRowErrorConnection, { description: 'The row errors, in file order' })
  async errors(
    @Root() job: ContactImport,
    @Ctx() ctx: ContactsContext,
    @Arg('first', () => Int, { nullable: true, description: `Errors to return, 1 to ${MAX_ERRORS_PAGE} (default 100)` })
    first?: number | null,
    @Arg('after', () => String, { nullable: true, description: 'Cursor of the error after which to start' })
    after?: string | null,
  ): Promise<ImportRowErrorConnection> {
    const size = first ?? 100;
    if (!Number.isInteger(size) || size < 1 || size > MAX_ERRORS_PAGE)
      throw AppError.badInput('first', `must be an integer from 1 to ${MAX_ERRORS_PAGE}`);
    const from = positionOf(after);
    const { items, more } = await ctx.imports.errors(job, size, from);
    return {
      nodes: items,
      pageInfo: {
        hasNextPage: more,
        hasPreviousPage: from > 0,
        startCursor: items.length ? errorCursor(from + 1) : null,
        endCursor: items.length ? errorCursor(from + items.length) : null,
      },
    };
  }
}
