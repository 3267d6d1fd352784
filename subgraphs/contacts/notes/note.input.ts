import { IsString, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';

const NOTE_MAX_LENGTH = 20_000;

@InputType({ description: 'The text of a new note' })
export class CreateNoteInput {
  @Field(() => String, { description: 'Text of the note (required, not blank)' })
  @IsString()
  @MaxLength(NOTE_MAX_LENGTH)
  body!: string;
}

/** A note's new text: the same field as on create, for a note is only its text. */
@InputType({ description: 'The new text of a note' })
export class UpdateNoteInput extends CreateNoteInput {}
