import { IsEmail, IsString, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';

@InputType({ description: 'Who asks for a sign-in link' })
export class MagicLinkRequestInput {
  @Field(() => String, { description: 'The e-mail address to send the link to' })
  @IsEmail({}, { message: 'must be a valid e-mail address' })
  @MaxLength(320)
  email!: string;
}

@InputType({ description: "A sign-in link's token to spend" })
export class MagicLinkVerifyInput {
  @Field(() => String, { description: 'The `token` query parameter of the link in the mail' })
  @IsString()
  @MaxLength(200)
  token!: string;
}
