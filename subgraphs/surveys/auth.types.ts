import { IsEmail, IsString, MaxLength } from 'class-validator';
import { Field, InputType, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A user of the survey service, known by e-mail address' })
export class SurveyUser {
  @Field(() => String) email!: string;
  @Field(() => Boolean, { description: 'Listed in ADMIN_EMAILS: sees every survey' }) isAdmin!: boolean;
}

@ObjectType({ description: 'The current sign-in session' })
export class SurveySession {
  @Field(() => SurveyUser) user!: SurveyUser;
  @Field(() => Date) expiresAt!: Date;
}

@ObjectType({ description: 'A new session: the token is shown this once' })
export class SurveySignIn {
  @Field(() => String, { description: 'Opaque session token, sent as `Authorization: Bearer` or the session cookie' })
  token!: string;
  @Field(() => SurveyUser) user!: SurveyUser;
  @Field(() => Date) expiresAt!: Date;
}

@ObjectType({ description: 'The same answer whether or not the address may sign in' })
export class MagicLinkRequested {
  @Field(() => Boolean) accepted!: boolean;
  @Field(() => String) message!: string;
}

@InputType()
export class MagicLinkRequestInput {
  @Field(() => String)
  @IsEmail({}, { message: 'must be a valid e-mail address' })
  @MaxLength(320)
  email!: string;
}

@InputType()
export class MagicLinkVerifyInput {
  @Field(() => String)
  @IsString()
  @MaxLength(200)
  token!: string;
}
