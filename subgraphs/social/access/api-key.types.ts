import { Field, ObjectType } from 'type-graphql';
import { ApiKey } from './api-key.entity.js';

@ObjectType({ description: 'A new API key: `key` is shown this once and never again' })
export class CreatedApiKey {
  @Field(() => String, {
    description: 'The API key itself, to send as X-API-Key: store it now, it is never shown again',
  })
  key!: string;
  @Field(() => ApiKey, { description: 'The key record, as apiKeys lists it' }) apiKey!: ApiKey;
}
