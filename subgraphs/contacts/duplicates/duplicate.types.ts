import { Field, Float, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PageInfo } from '#lib/data/pagination.js';
import { Contact } from '../contact/contact.entity.js';

/** Why two contacts look like one person. */
export enum DuplicateReason {
  EMAIL = 'EMAIL',
  PHONE = 'PHONE',
  NAME = 'NAME',
  COMPANY = 'COMPANY',
}

registerEnumType(DuplicateReason, {
  name: 'DuplicateReason',
  description: 'Why two contacts look like one person',
  valuesConfig: {
    EMAIL: {
      description: 'The same e-mail address once normalised (case; dots and +tags where the provider ignores them)',
    },
    PHONE: { description: 'The same phone number once normalised to E.164' },
    NAME: { description: 'Names alike despite case, accents and a typo' },
    COMPANY: { description: 'The same company, which makes another reason stronger' },
  },
});

@ObjectType({ description: 'A live contact likely to be the same person as the one asked about' })
export class ContactDuplicate {
  @Field(() => Contact, { description: 'The other contact' })
  contact!: Contact;

  @Field(() => Float, { description: 'How likely the two are one person, from 0 to 1' })
  score!: number;

  @Field(() => [DuplicateReason], { description: 'What the two have in common' })
  reasons!: DuplicateReason[];
}

@ObjectType({ description: 'Two live contacts of the book likely to be the same person' })
export class ContactDuplicatePair {
  @Field(() => [Contact], { description: 'The two contacts' })
  contacts!: Contact[];

  @Field(() => Float, { description: 'How likely the two are one person, from 0 to 1' })
  score!: number;

  @Field(() => [DuplicateReason], { description: 'What the two have in common' })
  reasons!: DuplicateReason[];
}

@ObjectType({ description: 'One pair of a connection, with its cursor' })
class ContactDuplicatePairEdge {
  @Field(() => String, { description: 'Opaque key of this pair: pass it as `after` to continue after it' })
  cursor!: string;
  @Field(() => ContactDuplicatePair, { description: 'The pair itself' }) node!: ContactDuplicatePair;
}

@ObjectType({ description: 'A page of the likely pairs of the book, best first (`first`/`after`)' })
export class ContactDuplicatePairConnection {
  @Field(() => [ContactDuplicatePairEdge], { description: 'The pairs of this page, each with its cursor' })
  edges!: ContactDuplicatePairEdge[];
  @Field(() => [ContactDuplicatePair], { description: 'The pairs of this page, without cursors' })
  nodes!: ContactDuplicatePair[];
  @Field(() => PageInfo, { description: 'Whether more pairs follow, and the cursor to continue after' })
  pageInfo!: PageInfo;
  @Field(() => Int, { description: 'How many pairs the book holds now' })
  totalCount!: number;
}

@ObjectType({ description: 'A numbered page of the likely pairs of the book, as the REST list answers' })
export class ContactDuplicatePairPage {
  @Field(() => [ContactDuplicatePair], { description: 'The pairs of this page' }) items!: ContactDuplicatePair[];
  @Field(() => Int, { description: 'Number of this page, from 1' }) page!: number;
  @Field(() => Int, { description: 'Page size asked for' }) limit!: number;
  @Field(() => Int, { description: 'How many pairs the book holds now' }) total!: number;
}
