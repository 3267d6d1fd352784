import { ConnectionType } from '#lib/data/pagination.js';
import { ContactEvent } from './contact-event.entity.js';

export const ContactEventConnection = ConnectionType(ContactEvent, 'ContactEvent');
