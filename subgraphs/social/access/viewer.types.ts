import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'The caller as the social service sees them' })
export class Viewer {
  @Field(() => ID, { description: "The user the credential acts for (the token's sub, or the key's owner)" })
  userId!: string;
  @Field(() => String, { nullable: true, description: "The user's e-mail address, when the token carries one" })
  email!: string | null;
  @Field(() => [String], { nullable: true, description: 'Scopes the credential carries; null means every scope' })
  scopes!: string[] | null;
  @Field(() => String, { description: 'bearer or api-key' }) via!: string;
}
