import { ConnectionType } from '#lib/data/pagination.js';
import { ContentEvent } from './content-event.entity.js';

export const ContentEventConnection = ConnectionType(ContentEvent, 'ContentEvent');
