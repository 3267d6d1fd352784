import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { ReviewLink } from './review-link.entity.js';
import { CreatedReviewLink, ReviewedPost } from './review-link.types.js';
import type { ReviewContext } from './review.context.js';
import { answerHoldsSecret } from '#lib/subgraph/idempotent-operations.js';

const TOKEN_DESCRIPTION = 'The token of the review link';
const COMMENT_DESCRIPTION = 'A note of the reviewer, kept in the audit event';

@Resolver(() => ReviewLink)
export class ReviewLinkResolver {
  @Mutation(() => CreatedReviewLink, {
    nullable: true,
    description: 'Makes a link that lets a client without an account approve or reject one suggested post',
  })
  createReviewLink(
    @Arg('postId', () => ID, { description: 'The suggested post to review' }) postId: string,
    @Arg('expiresInHours', () => Int, { nullable: true, description: 'Hours the link works, 1 to 720 (default 72)' })
    expiresInHours: number | null | undefined,
    @Ctx() ctx: ReviewContext,
  ) {
    // The link's token is shown this once: never kept for an Idempotency-Key's replay.
    answerHoldsSecret(ctx);
    return ctx.reviewLinks.create(postId, expiresInHours);
  }

  @Mutation(() => ReviewLink, { nullable: true, description: 'Ends a review link at once' })
  revokeReviewLink(
    @Arg('id', () => ID, { description: 'The link to revoke (its id, not its token)' }) id: string,
    @Ctx() ctx: ReviewContext,
  ) {
    return ctx.reviewLinks.revoke(id);
  }

  @Query(() => ReviewedPost, {
    nullable: true,
    description: 'The post a review link shows (no account needed: the token is the credential)',
  })
  reviewByToken(
    @Arg('token', () => String, { description: TOKEN_DESCRIPTION }) token: string,
    @Ctx() ctx: ReviewContext,
  ) {
    return ctx.reviewLinks.show(token);
  }

  @Mutation(() => ReviewedPost, {
    nullable: true,
    description: "Approves the link's post, as its owner's approve does",
  })
  approveByReviewLink(
    @Arg('token', () => String, { description: TOKEN_DESCRIPTION }) token: string,
    @Arg('comment', () => String, { nullable: true, description: COMMENT_DESCRIPTION })
    comment: string | null | undefined,
    @Ctx() ctx: ReviewContext,
  ) {
    return ctx.reviewLinks.decide(token, 'approve', comment);
  }

  @Mutation(() => ReviewedPost, { nullable: true, description: "Rejects the link's post, as its owner's reject does" })
  rejectByReviewLink(
    @Arg('token', () => String, { description: TOKEN_DESCRIPTION }) token: string,
    @Arg('comment', () => String, { nullable: true, description: COMMENT_DESCRIPTION })
    comment: string | null | undefined,
    @Ctx() ctx: ReviewContext,
  ) {
    return ctx.reviewLinks.decide(token, 'reject', comment);
  }
}
