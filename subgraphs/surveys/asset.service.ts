import { createHash } from 'node:crypto';
import type { EntityManager } from '../../lib/database.js';
import { AppError, ErrorCode } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ObjectStorage } from '../../lib/storage.js';
import { ALLOWED_ASSET_TYPES, isAllowedAssetType, looksLike, normalizeContentType, SIGNATURE_BYTES } from '../../lib/content-type.js';
import type { SurveyAssetCommitInput, SurveyAssetPresignInput, SurveyAssetUpload } from './asset.types.js';
import { AssetStatus, SurveyAsset } from './survey-asset.entity.js';
import type { SurveyService } from './survey.service.js';

const UPLOAD_URL_SECONDS = 15 * 60;
/** `GET /api/assets/{id}` hands out links that are meant to be used right away. */
export const DOWNLOAD_URL_SECONDS = 10 * 60;
// The size column is a 32-bit integer; ASSET_MAX_BYTES above that is capped here.
const SIZE_COLUMN_MAX = 2 ** 31 - 1;

export interface AssetSettings {
  storage: ObjectStorage;
  /** Base of the surveys REST service, which serves the local store's signed URLs. */
  publicUrl: string;
  /** Largest asset (`ASSET_MAX_BYTES`). */
  maxBytes: number;
}

/**
 * Two-step uploads: presign records a pending asset and hands out a URL for the bytes; commit
 * checks what arrived (size, type by its first bytes, checksum when given) and attaches it.
 * Only the owner of a visible draft survey may do either.
 */
export class AssetService {
  constructor(
    private readonly em: EntityManager,
    private readonly surveys: SurveyService,
    private readonly settings: AssetSettings,
  ) {}

  private get maxBytes(): number {
    return Math.min(this.settings.maxBytes, SIZE_COLUMN_MAX);
  }

  async presign(surveyId: string, input: SurveyAssetPresignInput): Promise<SurveyAssetUpload> {
    const survey = await this.surveys.changeable(surveyId);
    const contentType = normalizeContentType(input.contentType);
    if (!isAllowedAssetType(contentType)) {
      throw AppError.badInput('contentType', `must be one of ${ALLOWED_ASSET_TYPES.join(', ')}`);
    }
    if (input.size > this.maxBytes) {
      throw new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `The file is larger than the limit of ${this.maxBytes} bytes`, {
        fields: [{ field: 'size', message: `must be at most ${this.maxBytes} bytes` }],
      });
    }
    const asset = new SurveyAsset();
    asset.surveyId = survey.id;
    asset.filename = input.filename.trim();
    asset.contentType = contentType;
    asset.size = input.size;
    asset.storageKey = `surveys/${survey.id}/${asset.id}`;
    const upload = await this.settings.storage.presignPut(asset.storageKey, {
      contentType,
      size: input.size,
      expiresInSeconds: UPLOAD_URL_SECONDS,
      baseUrl: this.settings.publicUrl,
    });
    asset.uploadExpiresAt = upload.expiresAt;
    await this.em.persist(asset).flush();
    return {
      assetId: asset.id,
      uploadUrl: upload.url,
      method: upload.method,
      headers: Object.entries(upload.headers).map(([name, value]) => ({ name, value })),
      expiresAt: upload.expiresAt,
    };
  }

  async commit(surveyId: string, input: SurveyAssetCommitInput): Promise<SurveyAsset> {
    const survey = await this.surveys.changeable(surveyId);
    const asset = isUuid(input.assetId) ? await this.em.findOne(SurveyAsset, { id: input.assetId, surveyId: survey.id }) : null;
    if (!asset) throw new AppError(ErrorCode.NOT_FOUND, 'This survey has no asset with that assetId');
    if (asset.status === AssetStatus.committed) {
      throw new AppError(ErrorCode.CONFLICT, 'The asset is already committed', { details: { state: asset.status } });
    }
    const storage = this.settings.storage;
    const storedSize = await storage.size(asset.storageKey);
    if (storedSize === null) {
      throw new AppError(ErrorCode.CONFLICT, 'The file has not been uploaded yet; PUT it to the upload URL first', {
        details: { state: 'awaiting-upload' },
      });
    }
    // Bytes that fail a check are removed, so the client can upload again while its URL is valid.
    const reject = async (field: string, message: string): Promise<never> => {
      await storage.delete(asset.storageKey);
      throw AppError.badInput(field, message);
    };
    if (storedSize !== asset.size) await reject('size', `the uploaded file has ${storedSize} bytes; ${asset.size} were declared`);
    const { sha256, head } = await this.readStored(asset.storageKey);
    if (!looksLike(asset.contentType, head)) await reject('contentType', `the uploaded bytes are not ${asset.contentType}`);
    if (input.sha256 && input.sha256.toLowerCase() !== sha256) await reject('sha256', 'does not match the uploaded bytes');

    const committedAt = new Date();
    await this.em.transactional(async (tx) => {
      // Conditional on the state, so two concurrent commits cannot both attach the asset.
      const updated = await tx.nativeUpdate(SurveyAsset, { id: asset.id, status: AssetStatus.pending }, { status: AssetStatus.committed, sha256, committedAt });
      if (updated !== 1) throw new AppError(ErrorCode.CONFLICT, 'The asset is already committed', { details: { state: AssetStatus.committed } });
      this.surveys.audit(tx, survey, 'asset_committed', { assetId: asset.id, filename: asset.filename, size: asset.size, sha256 });
    });
    Object.assign(asset, { status: AssetStatus.committed, sha256, committedAt });
    return asset;
  }

  /** An asset whose survey this user may see, or null. */
  async find(assetId: string): Promise<SurveyAsset | null> {
    if (!isUuid(assetId)) return null;
    const asset = await this.em.findOne(SurveyAsset, { id: assetId });
    if (!asset || !(await this.surveys.find(asset.surveyId))) return null;
    return asset;
  }

  /** Committed assets of each survey, oldest first (the order they were added). */
  async committedOf(surveyIds: readonly string[]): Promise<Map<string, SurveyAsset[]>> {
    const found = surveyIds.length
      ? await this.em.find(SurveyAsset, { surveyId: { $in: [...surveyIds] }, status: AssetStatus.committed }, { orderBy: { createdAt: 'asc', id: 'asc' } })
      : [];
    const bySurvey = new Map<string, SurveyAsset[]>(surveyIds.map((id) => [id, []]));
    for (const asset of found) bySurvey.get(asset.surveyId)?.push(asset);
    return bySurvey;
  }

  /** A signed link to the bytes of a committed asset; null while it is pending. */
  async downloadUrl(asset: SurveyAsset, expiresInSeconds = DOWNLOAD_URL_SECONDS): Promise<string | null> {
    if (asset.status !== AssetStatus.committed) return null;
    return this.settings.storage.presignGet(asset.storageKey, {
      expiresInSeconds,
      baseUrl: this.settings.publicUrl,
      contentType: asset.contentType,
      filename: asset.filename,
    });
  }

  /** When a link that `downloadUrl` makes now stops working; null while the asset is pending. */
  downloadUrlExpiresAt(asset: SurveyAsset): Date | null {
    return asset.status === AssetStatus.committed ? new Date(Date.now() + DOWNLOAD_URL_SECONDS * 1000) : null;
  }

  private async readStored(key: string): Promise<{ sha256: string; head: Buffer }> {
    const { stream } = await this.settings.storage.open(key);
    const hash = createHash('sha256');
    const head: Buffer[] = [];
    let headBytes = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      hash.update(chunk);
      if (headBytes < SIGNATURE_BYTES) {
        head.push(chunk.subarray(0, SIGNATURE_BYTES - headBytes));
        headBytes += head.at(-1)!.length;
      }
    }
    return { sha256: hash.digest('hex'), head: Buffer.concat(head) };
  }
}
