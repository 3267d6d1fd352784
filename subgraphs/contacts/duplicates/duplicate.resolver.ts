import { Arg, Args, Ctx, FieldResolver, Int, Query, Resolver, Root } from 'type-graphql';
import { ConnectionArgs, PageArgs, windowOfPage } from '#lib/data/pagination.js';
import { Contact } from '../contact/contact.entity.js';
import type { DuplicatesContext } from './duplicates.context.js';
import { DUPLICATES_MAX, duplicatesFirst } from './duplicate.service.js';
import { ContactDuplicate, ContactDuplicatePairConnection, ContactDuplicatePairPage } from './duplicate.types.js';

@Resolver(() => Contact)
export class ContactDuplicatesResolver {
  @FieldResolver(() => [ContactDuplicate], {
    nullable: true,
    description:
      'Live contacts likely to be the same person, best first (e-mail, phone, name, company); empty for a deleted contact',
  })
  duplicates(
    @Root() contact: Contact,
    @Arg('first', () => Int, { nullable: true, description: `How many, 1 to ${DUPLICATES_MAX} (default 10)` })
    first: number | null,
    @Ctx() ctx: DuplicatesContext,
  ): Promise<ContactDuplicate[]> {
    return ctx.duplicatesOf.load({ contactId: contact.id, first: duplicatesFirst(first) });
  }
}

@Resolver()
export class DuplicatePairsResolver {
  @Query(() => ContactDuplicatePairConnection, {
    nullable: true,
    description:
      'Likely pairs of duplicates over the whole book, best first (computed in the background, within a minute of a change)',
  })
  contactDuplicates(@Args(() => ConnectionArgs) args: ConnectionArgs, @Ctx() ctx: DuplicatesContext) {
    return ctx.duplicates.pairConnection(args);
  }

  @Query(() => ContactDuplicatePairPage, {
    nullable: true,
    description: 'The same pairs as numbered pages, for the REST list (`page`/`limit`)',
  })
  async contactDuplicatePage(@Args(() => PageArgs) args: PageArgs, @Ctx() ctx: DuplicatesContext) {
    const window = windowOfPage(args);
    const { items, total } = await ctx.duplicates.pairPage(window);
    return { items, total, page: window.offset / window.limit + 1, limit: window.limit };
  }
}
