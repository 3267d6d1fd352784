import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { ConnectionArgs, PageArgs, toPage, windowOfPage } from '#lib/data/pagination.js';
import { Brand } from './brand.entity.js';
import { BrandInput, BrandSettingsInput } from './brand.input.js';
import { BrandSettings, BrandConnection, BrandPage } from './brand.types.js';
import type { AccessContext } from './access.context.js';

@Resolver(() => Brand)
export class BrandResolver {
  @Query(() => BrandConnection, {
    nullable: true,
    description: 'Your brands (an API key: the brands it reaches), oldest first',
  })
  brands(@Args(() => ConnectionArgs) args: ConnectionArgs, @Ctx() ctx: AccessContext) {
    return ctx.brands.connection(args);
  }

  @Query(() => Brand, { nullable: true, description: 'One of your brands; null for an unknown or foreign id' })
  brand(@Arg('id', () => ID, { description: 'The brand' }) id: string, @Ctx() ctx: AccessContext) {
    return ctx.brands.find(id);
  }

  @Query(() => BrandPage, {
    nullable: true,
    description: 'The same list as numbered pages, kept for the REST list (`page`/`limit`)',
  })
  async brandPage(@Args(() => PageArgs) args: PageArgs, @Ctx() ctx: AccessContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.brands.list(window), window);
  }

  @Mutation(() => Brand, { nullable: true, description: 'Creates a brand owned by the caller' })
  createBrand(
    @Arg('input', () => BrandInput, { description: 'Name and time zone of the brand' }) input: BrandInput,
    @Ctx() ctx: AccessContext,
  ) {
    return ctx.brands.create(input);
  }

  @Query(() => BrandSettings, {
    nullable: true,
    description: 'Time zone and default posting times of a brand; null when unknown',
  })
  async brandSettings(
    @Arg('brandId', () => ID, { description: 'The brand' }) brandId: string,
    @Ctx() ctx: AccessContext,
  ) {
    const brand = await ctx.brands.find(brandId);
    return brand ? ctx.brands.settingsOf(brand) : null;
  }

  @Mutation(() => BrandSettings, {
    nullable: true,
    description: 'Changes the time zone or default posting times of a brand',
  })
  updateBrandSettings(
    @Arg('brandId', () => ID, { description: 'The brand to change' }) brandId: string,
    @Arg('input', () => BrandSettingsInput, { description: 'Settings to change; omitted ones stay' })
    input: BrandSettingsInput,
    @Ctx() ctx: AccessContext,
  ) {
    return ctx.brands.updateSettings(brandId, input);
  }
}
