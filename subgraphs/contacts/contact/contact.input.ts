import { ArrayMaxSize, IsEmail, IsOptional, IsString, MaxLength } from 'class-validator';
import { ArgsType, Field, InputType, Int } from 'type-graphql';
import { PageArgs, ConnectionArgs } from '#lib/data/pagination.js';

const NAME_MAX = 200;

/** The fields a client sets on a contact (by API or by CSV import). */
export const EDITABLE_FIELDS = ['firstName', 'lastName', 'email', 'phone', 'company', 'tags'] as const;

/** A contact needs something to call it by: a first name or an e-mail address. */
export function hasIdentity(contact: Pick<UpdateContactInput, 'firstName' | 'email'>): boolean {
  return Boolean(contact.firstName || contact.email);
}

/** Fields of a contact to change; omitted fields stay as they are and null clears one. */
@InputType({ description: 'Fields of a contact to change; omitted fields stay as they are and null clears one' })
export class UpdateContactInput {
  @Field(() => String, {
    nullable: true,
    description: 'Given name; a new contact needs a first name or an e-mail address',
  })
  @IsOptional()
  @MaxLength(NAME_MAX)
  firstName?: string | null;

  @Field(() => String, { nullable: true, description: 'Family name' })
  @IsOptional()
  @MaxLength(NAME_MAX)
  lastName?: string | null;

  @Field(() => String, { nullable: true, description: 'E-mail address, unique among live contacts' })
  @IsOptional()
  @IsEmail({}, { message: 'must be a valid e-mail address' })
  @MaxLength(320)
  email?: string | null;

  @Field(() => String, { nullable: true, description: 'Phone number' })
  @IsOptional()
  @MaxLength(50)
  phone?: string | null;

  @Field(() => String, { nullable: true, description: 'Company the contact works for' })
  @IsOptional()
  @MaxLength(NAME_MAX)
  company?: string | null;

  @Field(() => [String], { nullable: true, description: 'Free labels; the list replaces the previous one' })
  @IsOptional()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(50, { each: true })
  tags?: string[] | null;
}

/**
 * Fields of a new contact: those of an update. No single one is required: a contact needs a first
 * name or an e-mail address, which one is the client's choice (checked in the service).
 */
@InputType({ description: 'Fields of a new contact: a first name or an e-mail address is required' })
export class CreateContactInput extends UpdateContactInput {}

/** The fields an import row fills (contact-import.service.ts): those of an update. */
export { UpdateContactInput as ContactInput };

@ArgsType()
export class ContactPageArgs extends PageArgs {
  @Field(() => String, {
    nullable: true,
    description: 'Full-text search over names, e-mail addresses, companies and tags',
  })
  @IsOptional()
  @MaxLength(200)
  search?: string;
}

@ArgsType()
export class ContactConnectionArgs extends ConnectionArgs {
  @Field(() => String, {
    nullable: true,
    description: 'Full-text search over names, e-mail addresses, companies and tags',
  })
  @IsOptional()
  @MaxLength(200)
  search?: string;
}

export const SCROLL_MAX = 1000;

@ArgsType()
export class ContactScrollArgs {
  @Field(() => Int, { nullable: true, description: `Items to return, 1 to ${SCROLL_MAX} (default ${SCROLL_MAX})` })
  first?: number;

  @Field(() => String, { nullable: true, description: 'endCursor of the previous page' })
  after?: string;

  @Field(() => Int, { nullable: true, description: `Items to return from the end, 1 to ${SCROLL_MAX}; not with first` })
  last?: number;

  @Field(() => String, { nullable: true, description: 'startCursor of the next page, to walk back' })
  before?: string;

  @Field(() => String, {
    nullable: true,
    description: 'Full-text search over names, e-mail addresses, companies and tags',
  })
  @IsOptional()
  @MaxLength(200)
  search?: string;
}
