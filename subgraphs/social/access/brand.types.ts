import { Field, ID, ObjectType } from 'type-graphql';
import { ConnectionType, PageType } from '#lib/data/pagination.js';
import { Brand } from './brand.entity.js';

@ObjectType({ description: 'Settings of one brand' })
export class BrandSettings {
  @Field(() => ID, { description: 'The brand these settings belong to' }) brandId!: string;
  @Field(() => String, { description: 'IANA time zone' }) timezone!: string;
  @Field(() => [String], { description: 'Local times of day (HH:MM) the brand usually posts at' })
  defaultPostingTimes!: string[];
  @Field(() => Date, { description: 'When the settings last changed' }) updatedAt!: Date;
}

export const BrandConnection = ConnectionType(Brand, 'Brand');
export const BrandPage = PageType(Brand, 'Brand');
