import { Arg, Args, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { KeysetConnection } from '#lib/data/keyset.js';
import { toPage, windowOfPage } from '#lib/data/pagination.js';
import { IF_VERSION_DESCRIPTION } from '#lib/data/versions.js';
import { Contact } from './contact.entity.js';
import {
  ContactConnectionArgs,
  CreateContactInput,
  UpdateContactInput,
  ContactPageArgs,
  ContactScrollArgs,
  SCROLL_MAX,
} from './contact.input.js';
import type { ContactContext } from './contact.context.js';
import { ContactConnection, ContactPage, ContactScrollConnection, DeleteContactPayload } from './contact.types.js';

@Resolver(() => Contact)
export class ContactResolver {
  @Query(() => Contact, {
    nullable: true,
    description: 'A live contact, or one merged into another (deleted, with mergedInto); null when unknown or deleted',
  })
  contact(@Arg('id', () => ID, { description: 'The contact' }) id: string, @Ctx() ctx: ContactContext) {
    return ctx.contacts.read(id);
  }

  @Query(() => ContactConnection, {
    nullable: true,
    description: 'Live contacts, newest first, optionally matching a full-text search',
  })
  contacts(@Args(() => ContactConnectionArgs) args: ContactConnectionArgs, @Ctx() ctx: ContactContext) {
    return ctx.contacts.connection(args, args.search);
  }

  @Query(() => ContactScrollConnection, {
    nullable: true,
    description:
      `The list of \`contacts\` (same order, same cursors) in pages of up to ${SCROLL_MAX} and ` +
      `without a total: it stays for exports, which read every contact in few round trips and need no count`,
  })
  contactScroll(
    @Args(() => ContactScrollArgs) args: ContactScrollArgs,
    @Ctx() ctx: ContactContext,
  ): Promise<KeysetConnection<Contact>> {
    return ctx.contacts.scroll(args, args.search);
  }

  @Query(() => ContactPage, {
    nullable: true,
    description:
      'The same list as numbered pages: it stays for the REST list (`page`/`limit`); GraphQL clients page `contacts` by cursor',
  })
  async contactPage(@Args(() => ContactPageArgs) args: ContactPageArgs, @Ctx() ctx: ContactContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.contacts.list(window, args.search), window);
  }

  @Mutation(() => Contact, {
    nullable: true,
    description: 'Creates a contact (a first name or an e-mail address is required)',
  })
  createContact(
    @Arg('input', () => CreateContactInput, { description: 'Fields of the new contact' }) input: CreateContactInput,
    @Ctx() ctx: ContactContext,
  ) {
    return ctx.contacts.create(input);
  }

  @Mutation(() => Contact, { nullable: true, description: 'Changes fields of a live contact' })
  updateContact(
    @Arg('id', () => ID, { description: 'The contact to change' }) id: string,
    @Arg('input', () => UpdateContactInput, { description: 'Fields to change; omitted ones stay, null clears one' })
    input: UpdateContactInput,
    @Arg('ifVersion', () => Int, { nullable: true, description: IF_VERSION_DESCRIPTION }) ifVersion: number | null,
    @Ctx() ctx: ContactContext,
  ) {
    return ctx.contacts.update(id, input, ifVersion);
  }

  @Mutation(() => DeleteContactPayload.type, {
    nullable: true,
    description: 'Soft delete: the record stays with deleted set, and leaves every list',
  })
  async deleteContact(
    @Arg('id', () => ID, { description: 'The contact to delete' }) id: string,
    @Arg('ifVersion', () => Int, { nullable: true, description: IF_VERSION_DESCRIPTION }) ifVersion: number | null,
    @Ctx() ctx: ContactContext,
  ) {
    return DeleteContactPayload.of(await ctx.contacts.softDelete(id, ifVersion));
  }
}
