import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { ConnectionArgs, ConnectionType, toConnection, windowOfConnection } from '../../../lib/pagination.js';
import { Brand } from '../access/brand.entity.js';
import { Campaign } from './campaign.entity.js';
import { CampaignInput } from './campaign.input.js';
import { Post } from './post.entity.js';
import type { ContentContext } from './content.context.js';

export const CampaignConnection = ConnectionType(Campaign, 'Campaign');

@ArgsType()
class CampaignConnectionArgs extends ConnectionArgs {
  @Field(() => ID, { nullable: true }) brandId?: string;
}

@Resolver(() => Campaign)
export class CampaignResolver {
  @Query(() => CampaignConnection, { description: 'Your campaigns, newest first' })
  async campaigns(@Args(() => CampaignConnectionArgs) args: CampaignConnectionArgs, @Ctx() ctx: ContentContext) {
    const window = windowOfConnection(args);
    return toConnection(await ctx.campaigns.list(window, args.brandId), window);
  }

  @Query(() => Campaign, { nullable: true })
  campaign(@Arg('id', () => ID) id: string, @Ctx() ctx: ContentContext) {
    return ctx.campaigns.find(id);
  }

  @Mutation(() => Campaign)
  createCampaign(@Arg('input', () => CampaignInput) input: CampaignInput, @Ctx() ctx: ContentContext) {
    return ctx.campaigns.create(input);
  }

  @Mutation(() => Campaign)
  updateCampaign(@Arg('id', () => ID) id: string, @Arg('input', () => CampaignInput) input: CampaignInput, @Ctx() ctx: ContentContext) {
    return ctx.campaigns.update(id, input);
  }

  @Mutation(() => ID, { description: 'Deletes a campaign; its posts stay, outside any campaign' })
  async deleteCampaign(@Arg('id', () => ID) id: string, @Ctx() ctx: ContentContext) {
    await ctx.campaigns.delete(id);
    return id;
  }

  @Mutation(() => Post, { description: 'Puts a post into a campaign of its brand, or takes it out (campaignId null)' })
  setPostCampaign(
    @Arg('postId', () => ID) postId: string,
    @Arg('campaignId', () => ID, { nullable: true }) campaignId: string | null,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.campaigns.setPostCampaign(postId, campaignId ?? null);
  }

  @FieldResolver(() => [Post], { description: 'Posts of the campaign, newest first' })
  posts(@Root() campaign: Campaign, @Ctx() ctx: ContentContext) {
    return ctx.postsByCampaign.load(campaign.id);
  }

  @FieldResolver(() => Brand, { nullable: true })
  brand(@Root() campaign: Campaign, @Ctx() ctx: ContentContext) {
    return ctx.brandById.load(campaign.brandId);
  }
}
