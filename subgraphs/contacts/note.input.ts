import { IsString, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';

const NOTE_MAX_LENGTH = 20_000;

@InputType({ description: 'The text of a note' })
export class NoteInput {
  @Field(() => String, { description: 'Text of the note (required, not blank)' })
  @IsString()
  @MaxLength(NOTE_MAX_LENGTH)
  body!: string;
}
