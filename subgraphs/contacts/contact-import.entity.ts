import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** A CSV file on its way to an import: reserved, its bytes stored, then read once by importContacts. */
@Entity({ tableName: 'import_upload' })
export class ImportUpload {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  storageKey!: string;

  @Property({ type: 'timestamptz' })
  uploadExpiresAt!: Date;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
