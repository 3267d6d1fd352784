import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import type { ExportContext } from './export.context.js';
import { ContactExportGrant } from './contact-export.types.js';

@Resolver()
export class ContactExportResolver {
  @Query(() => ContactExportGrant, {
    nullable: true,
    description:
      'Grants a CSV export of every live contact (or those matching search): the bytes are streamed apart from GraphQL',
  })
  contactExportGrant(
    @Arg('search', () => String, {
      nullable: true,
      description: 'Export only the contacts this full-text search finds',
    })
    search: string | null | undefined,
    @Ctx() ctx: ExportContext,
  ) {
    return ctx.exports.grant(search);
  }
}
