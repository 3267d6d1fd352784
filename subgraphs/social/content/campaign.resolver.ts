import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { ConnectionArgs } from '#lib/data/pagination.js';
import { Brand } from '../access/brand.entity.js';
import { Campaign } from './campaign.entity.js';
import { CreateCampaignInput, UpdateCampaignInput } from './campaign.input.js';
import { Post } from './post.entity.js';
import type { ContentContext } from './content.context.js';
import { CampaignConnection, DeleteCampaignPayload } from './campaign.types.js';

@ArgsType()
class CampaignConnectionArgs extends ConnectionArgs {
  @Field(() => ID, { nullable: true, description: 'Only campaigns of this brand' }) brandId?: string;
}
@Resolver(() => Campaign)
export class CampaignResolver {
  @Query(() => CampaignConnection, { nullable: true, description: 'Your campaigns, newest first' })
  campaigns(@Args(() => CampaignConnectionArgs) args: CampaignConnectionArgs, @Ctx() ctx: ContentContext) {
    return ctx.campaigns.connection(args, args.brandId);
  }

  @Query(() => Campaign, { nullable: true, description: 'One of your campaigns; null when unknown or out of reach' })
  campaign(@Arg('id', () => ID, { description: 'The campaign' }) id: string, @Ctx() ctx: ContentContext) {
    return ctx.campaigns.find(id);
  }

  @Mutation(() => Campaign, { nullable: true, description: 'Creates a campaign for one of your brands' })
  createCampaign(
    @Arg('input', () => CreateCampaignInput, { description: 'Brand, name and description of the campaign' })
    input: CreateCampaignInput,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.campaigns.create(input);
  }

  @Mutation(() => Campaign, { nullable: true, description: 'Changes the name or description of a campaign' })
  updateCampaign(
    @Arg('id', () => ID, { description: 'The campaign to change' }) id: string,
    @Arg('input', () => UpdateCampaignInput, { description: 'Fields to change; omitted ones stay' })
    input: UpdateCampaignInput,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.campaigns.update(id, input);
  }

  @Mutation(() => DeleteCampaignPayload.type, {
    nullable: true,
    description: 'Deletes a campaign; its posts stay, outside any campaign',
  })
  async deleteCampaign(
    @Arg('id', () => ID, { description: 'The campaign to delete' }) id: string,
    @Ctx() ctx: ContentContext,
  ) {
    return DeleteCampaignPayload.of(await ctx.campaigns.delete(id));
  }

  @Mutation(() => Post, {
    nullable: true,
    description: 'Puts a post into a campaign of its brand, or takes it out (campaignId null)',
  })
  setPostCampaign(
    @Arg('postId', () => ID, { description: 'The post to move' }) postId: string,
    @Arg('campaignId', () => ID, {
      nullable: true,
      description: "A campaign of the post's brand; null takes the post out of its campaign",
    })
    campaignId: string | null,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.campaigns.setPostCampaign(postId, campaignId ?? null);
  }

  @FieldResolver(() => [Post], {
    nullable: true,
    description: 'Posts of the campaign, newest first; null, with an error, without the posts.read scope',
  })
  posts(@Root() campaign: Campaign, @Ctx() ctx: ContentContext) {
    return ctx.postsByCampaign.load(campaign.id);
  }

  @FieldResolver(() => Brand, {
    nullable: true,
    description: "The brand of the campaign; null when out of the caller's reach",
  })
  brand(@Root() campaign: Campaign, @Ctx() ctx: ContentContext) {
    return ctx.brandById.load(campaign.brandId);
  }
}
