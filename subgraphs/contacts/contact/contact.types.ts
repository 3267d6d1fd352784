import { Field, ObjectType } from 'type-graphql';
import { ConnectionType, PageInfo, PageType } from '#lib/data/pagination.js';
import { DeletePayloadType } from '#lib/subgraph/delete-payload.js';
import { Contact } from './contact.entity.js';

export const ContactConnection = ConnectionType(Contact, 'Contact');
export const ContactPage = PageType(Contact, 'Contact');

@ObjectType('ContactScrollEdge', { description: 'One contact of a keyset walk, with its cursor' })
class ContactScrollEdge {
  @Field(() => String, { description: 'Position of this contact in the walk: pass it as `after` to continue after it' })
  cursor!: string;
  @Field(() => Contact, { description: 'The contact itself' }) node!: Contact;
}

@ObjectType({
  description: 'A page of a keyset walk over every live contact (no total: counting would cost each page a scan)',
})
export class ContactScrollConnection {
  @Field(() => [ContactScrollEdge], { description: 'The contacts of this page, each with its cursor' })
  edges!: ContactScrollEdge[];
  @Field(() => [Contact], { description: 'The contacts of this page, without cursors' }) nodes!: Contact[];
  @Field(() => PageInfo, { description: 'Whether more contacts follow, and the cursor to continue after' })
  pageInfo!: PageInfo;
}

export const DeleteContactPayload = DeletePayloadType(Contact, 'Contact');
