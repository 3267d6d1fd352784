import { Field, ObjectType } from 'type-graphql';
import { Contact } from '../contact/contact.entity.js';
import { ContactMerge } from './contact-merge.entity.js';

@ObjectType({ description: 'The survivor of a merge, and the merge' })
export class MergeContactsPayload {
  @Field(() => Contact, { description: 'The survivor as it is after the merge (as it would be, on a dry run)' })
  contact!: Contact;

  @Field(() => ContactMerge, { nullable: true, description: 'The merge; null on a dry run, which writes nothing' })
  merge!: ContactMerge | null;
}

@ObjectType({ description: 'A merge undone: the survivor and the contacts back' })
export class UndoContactMergePayload {
  @Field(() => ContactMerge, { description: 'The merge, now with undoneAt' })
  merge!: ContactMerge;

  @Field(() => Contact, { description: 'The survivor, its merged-in values given back unless edited since' })
  survivor!: Contact;

  @Field(() => [Contact], { description: 'The contacts merged, live again as they were' })
  restored!: Contact[];
}
