import { Field, ObjectType } from 'type-graphql';

@ObjectType({ description: 'Leave to read one CSV export from the contacts service, once, within a minute' })
export class ContactExportGrant {
  @Field(() => String, {
    description: 'Signed grant naming the export (its search); the service streams the file at /exports/<grant>',
  })
  grant!: string;

  @Field(() => Date, { description: 'When the grant stops being accepted' })
  expiresAt!: Date;
}
