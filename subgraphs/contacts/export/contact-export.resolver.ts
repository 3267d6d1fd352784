import { Arg, Ctx, Field, ObjectType, Query, Resolver } from 'type-graphql';
import type { ExportContext } from './export.context.js';

@ObjectType({ description: 'Leave to read one CSV export from the contacts service, once, within a minute' })
export class ContactExportGrant {
  @Field(() => String, {
    description: 'Signed grant naming the export (its search); the service streams the file at /exports/<grant>',
  })
  grant!: string;

  @Field(() => Date, { description: 'When the grant stops being accepted' })
  expiresAt!: Date;
}

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
