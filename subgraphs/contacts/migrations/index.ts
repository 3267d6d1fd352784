import { Migration20261122000001Contacts } from './Migration20261122000001Contacts.js';

/** Every migration of the contacts schema, oldest first. */
export const contactsMigrations = [Migration20261122000001Contacts];
