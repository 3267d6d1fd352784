import { Arg, Args, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { ConnectionArgs, PageArgs, toPage, windowOfPage } from '#lib/data/pagination.js';
import { IF_VERSION_DESCRIPTION } from '#lib/data/versions.js';
import type { NotesContext } from './notes.context.js';
import { Note } from './note.entity.js';
import { CreateNoteInput, UpdateNoteInput } from './note.input.js';
import { NoteConnection, NotePage, DeleteNotePayload } from './note.types.js';

@Resolver(() => Note)
export class NoteResolver {
  @Query(() => NoteConnection, { nullable: true, description: 'Notes of a live contact, newest first' })
  notes(
    @Arg('contactId', () => ID, { description: 'The contact whose notes to list' }) contactId: string,
    @Args(() => ConnectionArgs) args: ConnectionArgs,
    @Ctx() ctx: NotesContext,
  ) {
    return ctx.notes.connection(contactId, args);
  }

  @Query(() => NotePage, {
    nullable: true,
    description: 'The same list as numbered pages, kept for the REST list (`page`/`limit`)',
  })
  async notePage(
    @Arg('contactId', () => ID, { description: 'The contact whose notes to list' }) contactId: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: NotesContext,
  ) {
    const window = windowOfPage(args);
    return toPage(await ctx.notes.list(contactId, window), window);
  }

  @Query(() => Note, { nullable: true, description: 'A note of the given contact; NOT_FOUND under any other contact' })
  note(
    @Arg('contactId', () => ID, { description: 'The contact the note belongs to' }) contactId: string,
    @Arg('id', () => ID, { description: 'The note' }) id: string,
    @Ctx() ctx: NotesContext,
  ) {
    return ctx.notes.get(contactId, id);
  }

  @Mutation(() => Note, { nullable: true, description: 'Writes a note on a live contact' })
  createNote(
    @Arg('contactId', () => ID, { description: 'The contact the note is about' }) contactId: string,
    @Arg('input', () => CreateNoteInput, { description: 'Text of the note' }) input: CreateNoteInput,
    @Ctx() ctx: NotesContext,
  ) {
    return ctx.notes.create(contactId, input);
  }

  @Mutation(() => Note, { nullable: true, description: 'Changes the text of a note' })
  updateNote(
    @Arg('contactId', () => ID, { description: 'The contact the note belongs to' }) contactId: string,
    @Arg('id', () => ID, { description: 'The note to change' }) id: string,
    @Arg('input', () => UpdateNoteInput, { description: 'New text of the note' }) input: UpdateNoteInput,
    @Arg('ifVersion', () => Int, { nullable: true, description: IF_VERSION_DESCRIPTION }) ifVersion: number | null,
    @Ctx() ctx: NotesContext,
  ) {
    return ctx.notes.update(contactId, id, input, ifVersion);
  }

  @Mutation(() => DeleteNotePayload.type, { nullable: true, description: 'Removes the note permanently' })
  async deleteNote(
    @Arg('contactId', () => ID, { description: 'The contact the note belongs to' }) contactId: string,
    @Arg('id', () => ID, { description: 'The note to remove' }) id: string,
    @Arg('ifVersion', () => Int, { nullable: true, description: IF_VERSION_DESCRIPTION }) ifVersion: number | null,
    @Ctx() ctx: NotesContext,
  ) {
    return DeleteNotePayload.of(await ctx.notes.delete(contactId, id, ifVersion));
  }
}
