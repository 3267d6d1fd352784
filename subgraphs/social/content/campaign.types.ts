import { ConnectionType } from '#lib/data/pagination.js';
import { DeletePayloadType } from '#lib/subgraph/delete-payload.js';
import { Campaign } from './campaign.entity.js';

export const CampaignConnection = ConnectionType(Campaign, 'Campaign');

export const DeleteCampaignPayload = DeletePayloadType(Campaign, 'Campaign');
