import { Field, ID, InputType } from 'type-graphql';

/** More contacts than this merged at once would hold the survivor's lock (and the caller) too long. */
export const MERGE_MAX = 49;

/** The contact each field of the survivor is taken from. */
@InputType({
  description: 'For each field, the contact (the survivor or one in mergeIds) whose value the survivor takes',
})
export class ContactFieldSourcesInput {
  @Field(() => ID, { nullable: true, description: 'Contact whose first name the survivor takes' }) firstName?:
    string | null;
  @Field(() => ID, { nullable: true, description: 'Contact whose last name the survivor takes' }) lastName?:
    string | null;
  @Field(() => ID, { nullable: true, description: 'Contact whose e-mail address the survivor takes' }) email?:
    string | null;
  @Field(() => ID, { nullable: true, description: 'Contact whose phone number the survivor takes' }) phone?:
    string | null;
  @Field(() => ID, { nullable: true, description: 'Contact whose company the survivor takes' }) company?: string | null;
}

@InputType({ description: 'Contacts to merge into one that survives' })
export class MergeContactsInput {
  @Field(() => ID, { description: 'The contact that survives' })
  survivorId!: string;

  @Field(() => [ID], {
    description: `The contacts merged into it (1 to ${MERGE_MAX}), in the order their values fill the survivor's empty fields`,
  })
  mergeIds!: string[];

  @Field(() => ContactFieldSourcesInput, {
    nullable: true,
    description: "Fields taken from another contact than the survivor; the others keep the survivor's value",
  })
  fieldSources?: ContactFieldSourcesInput | null;

  @Field(() => Boolean, { nullable: true, description: 'True: answer the survivor as it would be, and write nothing' })
  dryRun?: boolean | null;
}
