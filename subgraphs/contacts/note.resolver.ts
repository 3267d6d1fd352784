import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { ConnectionArgs, ConnectionType, PageArgs, PageType, toConnection, toPage, windowOfConnection, windowOfPage } from '../../lib/pagination.js';
import type { ContactsContext } from './contacts.context.js';
import { Note } from './note.entity.js';
import { NoteInput } from './note.input.js';

export const NoteConnection = ConnectionType(Note, 'Note');
export const NotePage = PageType(Note, 'Note');

@Resolver(() => Note)
export class NoteResolver {
  @Query(() => NoteConnection, { description: 'Notes of a live contact, newest first' })
  async notes(@Arg('contactId', () => ID) contactId: string, @Args(() => ConnectionArgs) args: ConnectionArgs, @Ctx() ctx: ContactsContext) {
    const window = windowOfConnection(args);
    return toConnection(await ctx.notes.list(contactId, window), window);
  }

  @Query(() => NotePage, { description: 'The same list as numbered pages' })
  async notePage(@Arg('contactId', () => ID) contactId: string, @Args(() => PageArgs) args: PageArgs, @Ctx() ctx: ContactsContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.notes.list(contactId, window), window);
  }

  @Query(() => Note, { description: 'A note of the given contact; NOT_FOUND under any other contact' })
  note(@Arg('contactId', () => ID) contactId: string, @Arg('id', () => ID) id: string, @Ctx() ctx: ContactsContext) {
    return ctx.notes.get(contactId, id);
  }

  @Mutation(() => Note)
  createNote(@Arg('contactId', () => ID) contactId: string, @Arg('input', () => NoteInput) input: NoteInput, @Ctx() ctx: ContactsContext) {
    return ctx.notes.create(contactId, input);
  }

  @Mutation(() => Note)
  updateNote(
    @Arg('contactId', () => ID) contactId: string,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => NoteInput) input: NoteInput,
    @Ctx() ctx: ContactsContext,
  ) {
    return ctx.notes.update(contactId, id, input);
  }

  @Mutation(() => Note, { description: 'Removes the note permanently; answers it as it was' })
  deleteNote(@Arg('contactId', () => ID) contactId: string, @Arg('id', () => ID) id: string, @Ctx() ctx: ContactsContext) {
    return ctx.notes.delete(contactId, id);
  }
}
