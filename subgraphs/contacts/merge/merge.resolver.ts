import { Arg, Ctx, FieldResolver, ID, Mutation, Resolver, Root } from 'type-graphql';
import { Contact } from '../contact/contact.entity.js';
import type { MergeContext } from './merge.context.js';
import { MergeContactsInput } from './merge.input.js';
import { UNDO_WINDOW_DAYS } from './merge.service.js';
import { MergeContactsPayload, UndoContactMergePayload } from './merge.types.js';

@Resolver(() => Contact)
export class MergeResolver {
  @Mutation(() => MergeContactsPayload, {
    nullable: true,
    description:
      'Merges contacts into one that survives, in one transaction: fields by fieldSources, empty ones filled, tags joined; ' +
      'notes, attachments and stage history move to it; the others are soft deleted with mergedInto',
  })
  mergeContacts(
    @Arg('input', () => MergeContactsInput, { description: 'The survivor, the contacts merged into it, and how' })
    input: MergeContactsInput,
    @Ctx() ctx: MergeContext,
  ) {
    return ctx.merges.merge(input);
  }

  @Mutation(() => UndoContactMergePayload, {
    nullable: true,
    description:
      `Undoes a merge within ${UNDO_WINDOW_DAYS} days: the merged contacts come back with what moved from them, ` +
      'and the survivor gets back its values unless edited since; CONFLICT when already undone',
  })
  undoContactMerge(@Arg('id', () => ID, { description: 'The merge' }) id: string, @Ctx() ctx: MergeContext) {
    return ctx.merges.undo(id);
  }

  // Nullable: other services read it (Contact.surveys requires it), and every field that crosses services is.
  @FieldResolver(() => [ID], {
    nullable: true,
    description:
      'Ids of the contacts merged into this one (through merges of merges; a merge undone takes its ids away); other services follow them',
  })
  mergedIds(@Root() contact: Contact, @Ctx() ctx: MergeContext): Promise<string[]> {
    return ctx.mergedIdsOf.load(contact.id);
  }
}
