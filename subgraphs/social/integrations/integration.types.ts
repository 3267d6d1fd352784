import { Field, ObjectType } from 'type-graphql';
import { Integration } from './integration.entity.js';

@ObjectType({ description: 'Where to send the browser to authorize the platform, and until when that link works' })
export class IntegrationConnectStart {
  @Field(() => String, { description: "The platform's page where the user authorizes this service" })
  authorizeUrl!: string;
  @Field(() => Date, { description: 'Until when the connect can be completed' }) expiresAt!: Date;
}

@ObjectType({ description: 'How a connect ended, and where the browser goes next' })
export class IntegrationConnectOutcome {
  @Field(() => Integration, {
    nullable: true,
    description: 'The connected account; null when the user or platform declined',
  })
  integration!: Integration | null;

  @Field(() => String, { description: 'The web app page that tells the user how it went' })
  redirectUrl!: string;
}
