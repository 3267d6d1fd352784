import { fileURLToPath } from 'node:url';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { Config } from '../config.js';
import { deriveKeys, masterKeys } from '../secrets.js';
import { FileStorage } from './file-storage.js';
import { S3Storage } from './s3-storage.js';
import type { ObjectStorage } from './storage.js';

/** The store `STORAGE_URL` names: `file://` (the default, under DATA_DIR) or `s3://bucket`. */
export function createStorage(config: Config): ObjectStorage {
  const url = new URL(config.storageUrl);
  if (url.protocol === 's3:') {
    const clientConfig: S3ClientConfig = {
      region: config.env.S3_REGION,
      endpoint: config.env.S3_ENDPOINT,
      forcePathStyle: Boolean(config.env.S3_ENDPOINT),
      credentials: { accessKeyId: config.env.S3_ACCESS_KEY_ID!, secretAccessKey: config.env.S3_SECRET_ACCESS_KEY! },
    };
    return new S3Storage(clientConfig, url.hostname);
  }
  return new FileStorage(fileURLToPath(url), deriveKeys(masterKeys(config), 'storage-urls'));
}
