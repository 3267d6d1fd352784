import { Field, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A user of the survey service, known by e-mail address' })
export class SurveyUser {
  @Field(() => String, { description: 'E-mail address the user signed in with' }) email!: string;
  @Field(() => Boolean, { description: 'Listed in ADMIN_EMAILS: sees every survey' }) isAdmin!: boolean;
}

@ObjectType({ description: 'The current sign-in session' })
export class SurveySession {
  @Field(() => SurveyUser, { description: 'Who is signed in' }) user!: SurveyUser;
  @Field(() => Date, { description: 'When the session ends' }) expiresAt!: Date;
}

@ObjectType({ description: 'A new session: the token is shown this once' })
export class SurveySignIn {
  @Field(() => String, { description: 'Opaque session token, sent as `Authorization: Bearer` or the session cookie' })
  token!: string;
  @Field(() => SurveyUser, { description: 'Who signed in' }) user!: SurveyUser;
  @Field(() => Date, { description: 'When the session ends' }) expiresAt!: Date;
}

@ObjectType({ description: 'The same answer whether or not the address may sign in' })
export class MagicLinkRequested {
  @Field(() => Boolean, { description: 'Always true: the answer never tells whether the address may sign in' })
  accepted!: boolean;
  @Field(() => String, { description: 'What to tell the user (the same for every address)' }) message!: string;
}
