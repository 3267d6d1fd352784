import { Arg, Args, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { IF_VERSION_DESCRIPTION } from '../../lib/data/versions.js';
import {
  ConnectionType,
  PageInfo,
  PageType,
  toConnection,
  toPage,
  windowOfConnection,
  windowOfPage,
} from '../../lib/data/pagination.js';
import { Contact } from './contact.entity.js';
import {
  ContactConnectionArgs,
  ContactInput,
  ContactPageArgs,
  ContactScrollArgs,
  SCROLL_MAX,
} from './contact.input.js';
import { encodeKeyset } from './contact.service.js';
import type { ContactsContext } from './contacts.context.js';

export const ContactConnection = ConnectionType(Contact, 'Contact');
export const ContactPage = PageType(Contact, 'Contact');

@ObjectType('ContactScrollEdge', { description: 'One contact of a keyset walk, with its cursor' })
class ContactScrollEdge {
  @Field(() => String, { description: 'Position of this contact in the walk: pass it as `after` to continue after it' })
  cursor!: string;
  @Field(() => Contact, { description: 'The contact itself' }) node!: Contact;
}

@ObjectType({
  description: 'A page of a keyset walk over every live contact (no total: counting would cost each page a scan)',
})
export class ContactScrollConnection {
  @Field(() => [ContactScrollEdge], { description: 'The contacts of this page, each with its cursor' })
  edges!: ContactScrollEdge[];
  @Field(() => [Contact], { description: 'The contacts of this page, without cursors' }) nodes!: Contact[];
  @Field(() => PageInfo, { description: 'Whether more contacts follow, and the cursor to continue after' })
  pageInfo!: PageInfo;
}

@Resolver(() => Contact)
export class ContactResolver {
  @Query(() => Contact, { nullable: true, description: 'A live contact; null when unknown or deleted' })
  contact(@Arg('id', () => ID, { description: 'The contact' }) id: string, @Ctx() ctx: ContactsContext) {
    return ctx.contacts.read(id);
  }

  @Query(() => ContactConnection, {
    nullable: true,
    description: 'Live contacts, newest first, optionally matching a full-text search',
  })
  async contacts(@Args(() => ContactConnectionArgs) args: ContactConnectionArgs, @Ctx() ctx: ContactsContext) {
    const window = windowOfConnection(args);
    return toConnection(await ctx.contacts.list(window, args.search), window);
  }

  @Query(() => ContactScrollConnection, {
    nullable: true,
    description: `Every live contact (or those matching search), newest first, in pages of up to ${SCROLL_MAX} with stable keyset cursors: for exports`,
  })
  async contactScroll(
    @Args(() => ContactScrollArgs) args: ContactScrollArgs,
    @Ctx() ctx: ContactsContext,
  ): Promise<ContactScrollConnection> {
    const { items, hasMore } = await ctx.contacts.scroll(args.first, args.after, args.search);
    const head = items[0];
    const last = items.at(-1);
    return {
      // A cursor per edge only when edges are asked for; an export reads nodes and the end cursor.
      get edges() {
        return items.map((node) => ({ cursor: encodeKeyset(node), node }));
      },
      nodes: items,
      pageInfo: {
        hasNextPage: hasMore,
        hasPreviousPage: Boolean(args.after),
        startCursor: head ? encodeKeyset(head) : null,
        endCursor: last ? encodeKeyset(last) : null,
      },
    };
  }

  @Query(() => ContactPage, {
    nullable: true,
    description: 'The same list as numbered pages, for clients that page by number',
  })
  async contactPage(@Args(() => ContactPageArgs) args: ContactPageArgs, @Ctx() ctx: ContactsContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.contacts.list(window, args.search), window);
  }

  @Mutation(() => Contact, {
    nullable: true,
    description: 'Creates a contact (a first name or an e-mail address is required)',
  })
  createContact(
    @Arg('input', () => ContactInput, { description: 'Fields of the new contact' }) input: ContactInput,
    @Ctx() ctx: ContactsContext,
  ) {
    return ctx.contacts.create(input);
  }

  @Mutation(() => Contact, { nullable: true, description: 'Changes fields of a live contact' })
  updateContact(
    @Arg('id', () => ID, { description: 'The contact to change' }) id: string,
    @Arg('input', () => ContactInput, { description: 'Fields to change; omitted ones stay, null clears one' })
    input: ContactInput,
    @Arg('ifVersion', () => Int, { nullable: true, description: IF_VERSION_DESCRIPTION }) ifVersion: number | null,
    @Ctx() ctx: ContactsContext,
  ) {
    return ctx.contacts.update(id, input, ifVersion);
  }

  @Mutation(() => Contact, {
    nullable: true,
    description: 'Soft delete: the record stays with deleted set, and leaves every list',
  })
  deleteContact(
    @Arg('id', () => ID, { description: 'The contact to delete' }) id: string,
    @Arg('ifVersion', () => Int, { nullable: true, description: IF_VERSION_DESCRIPTION }) ifVersion: number | null,
    @Ctx() ctx: ContactsContext,
  ) {
    return ctx.contacts.softDelete(id, ifVersion);
  }
}
