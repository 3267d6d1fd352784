import { Field, ID, ObjectType } from 'type-graphql';
import { PostStatus } from '../content/post.entity.js';
import { Platform } from '../social.platforms.js';

@ObjectType({ description: 'A new review link: `token` and `url` are shown this once' })
export class CreatedReviewLink {
  @Field(() => ID, { description: 'Id of the link, to revoke it' }) id!: string;
  @Field(() => String, { description: 'The page of the web app where the client reviews the post (holds the token)' })
  url!: string;
  @Field(() => String, { description: 'The token itself: store or send it now, it is never shown again' })
  token!: string;
  @Field(() => Date, { description: 'When the link stops working' }) expiresAt!: Date;
}

@ObjectType({
  description: 'What a review link shows of its post: the post itself and its brand name, nothing else of the owner',
})
export class ReviewedPost {
  @Field(() => String, { description: 'Text of the post' }) content!: string;
  @Field(() => [Platform], { description: 'Platforms the post goes to' }) platforms!: Platform[];
  @Field(() => [String], { description: 'Short-lived URLs of the attached media files' }) mediaUrls!: string[];
  @Field(() => Date, { nullable: true, description: 'When the post is to be published; null when not scheduled' })
  scheduledAt!: Date | null;
  @Field(() => String, { description: 'Name of the brand the post is for' }) brandName!: string;
  @Field(() => PostStatus, { description: 'Where the post stands: suggested until someone decides' })
  status!: PostStatus;
  @Field(() => Date, { description: 'When the link stops working' }) expiresAt!: Date;
}
