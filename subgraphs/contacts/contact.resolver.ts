import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { ConnectionType, PageType, toConnection, toPage, windowOfConnection, windowOfPage } from '../../lib/pagination.js';
import { Contact } from './contact.entity.js';
import { ContactConnectionArgs, ContactInput, ContactPageArgs } from './contact.input.js';
import type { ContactsContext } from './contacts.context.js';

export const ContactConnection = ConnectionType(Contact, 'Contact');
export const ContactPage = PageType(Contact, 'Contact');

@Resolver(() => Contact)
export class ContactResolver {
  @Query(() => Contact, { nullable: true, description: 'A live contact; null when unknown or deleted' })
  contact(@Arg('id', () => ID) id: string, @Ctx() ctx: ContactsContext) {
    return ctx.contacts.find(id);
  }

  @Query(() => ContactConnection, { description: 'Live contacts, newest first, optionally matching a full-text search' })
  async contacts(@Args(() => ContactConnectionArgs) args: ContactConnectionArgs, @Ctx() ctx: ContactsContext) {
    const window = windowOfConnection(args);
    return toConnection(await ctx.contacts.list(window, args.search), window);
  }

  @Query(() => ContactPage, { description: 'The same list as numbered pages, for clients that page by number' })
  async contactPage(@Args(() => ContactPageArgs) args: ContactPageArgs, @Ctx() ctx: ContactsContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.contacts.list(window, args.search), window);
  }

  @Mutation(() => Contact)
  createContact(@Arg('input', () => ContactInput) input: ContactInput, @Ctx() ctx: ContactsContext) {
    return ctx.contacts.create(input);
  }

  @Mutation(() => Contact)
  updateContact(@Arg('id', () => ID) id: string, @Arg('input', () => ContactInput) input: ContactInput, @Ctx() ctx: ContactsContext) {
    return ctx.contacts.update(id, input);
  }

  @Mutation(() => Contact, { description: 'Soft delete: the record stays with deleted set, and leaves every list' })
  deleteContact(@Arg('id', () => ID) id: string, @Ctx() ctx: ContactsContext) {
    return ctx.contacts.softDelete(id);
  }
}
