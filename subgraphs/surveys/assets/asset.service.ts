import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import {
  checkDeclaration,
  commitUpload,
  presignUpload,
  sweepReservations,
  type UploadPolicy,
} from '#lib/storage/uploads.js';
import type { SurveyAssetUpload } from './asset.types.js';
import type { SurveyAssetCommitInput, SurveyAssetPresignInput } from './asset.input.js';
import { AssetStatus, SurveyAsset } from './survey-asset.entity.js';
import type { SurveyService } from '../survey/survey.service.js';

/** What a survey may carry: photos (as phones take them) and PDF documents. */
export const ALLOWED_ASSET_TYPES = [
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
  'application/pdf',
  'image/heic',
  'image/heif',
  'image/avif',
];
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
 * Two-step uploads on the platform's upload protocol (`lib/storage/uploads.ts`): presign records a pending
 * asset and hands out a URL for the bytes (its staging key); commit checks what arrived (size, type by
 * its first bytes, checksum when given), moves it into place and attaches it. Only the owner of a
 * visible draft survey may do either.
 */
export class AssetService {
  constructor(
    private readonly em: EntityManager,
    private readonly surveys: SurveyService,
    private readonly settings: AssetSettings,
  ) {}

  private get policy(): UploadPolicy {
    return { maxBytes: Math.min(this.settings.maxBytes, SIZE_COLUMN_MAX), allowedTypes: ALLOWED_ASSET_TYPES };
  }

  async presign(surveyId: string, input: SurveyAssetPresignInput): Promise<SurveyAssetUpload> {
    const survey = await this.surveys.changeable(surveyId);
    const contentType = checkDeclaration(this.policy, input);
    const asset = new SurveyAsset();
    asset.surveyId = survey.id;
    asset.filename = input.filename.trim();
    asset.contentType = contentType;
    asset.size = input.size;
    asset.storageKey = `surveys/${survey.id}/${asset.id}`;
    const upload = await presignUpload(
      this.settings.storage,
      { key: asset.storageKey, contentType, size: input.size },
      { expiresInSeconds: UPLOAD_URL_SECONDS, baseUrl: this.settings.publicUrl },
    );
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
    const asset = isUuid(input.assetId)
      ? await this.em.findOne(SurveyAsset, { id: input.assetId, surveyId: survey.id })
      : null;
    if (!asset) throw new AppError(ErrorCode.NOT_FOUND, 'This survey has no asset with that assetId');
    if (asset.status === AssetStatus.COMMITTED) {
      throw new AppError(ErrorCode.CONFLICT, 'The asset is already committed', { details: { state: asset.status } });
    }
    const { sha256 } = await commitUpload(
      this.settings.storage,
      { key: asset.storageKey, contentType: asset.contentType, size: asset.size, expiresAt: asset.uploadExpiresAt },
      this.policy,
      { hash: true, sha256: input.sha256 },
    );
    const committedAt = new Date();
    await this.em.transactional(async (tx) => {
      // Conditional on the state, so two concurrent commits cannot both attach the asset.
      // The bytes in place are the checked ones either way: a losing commit leaves them to the winner.
      const updated = await tx.nativeUpdate(
        SurveyAsset,
        { id: asset.id, status: AssetStatus.PENDING },
        { status: AssetStatus.COMMITTED, sha256, committedAt },
      );
      if (updated !== 1)
        throw new AppError(ErrorCode.CONFLICT, 'The asset is already committed', {
          details: { state: AssetStatus.COMMITTED },
        });
      this.surveys.audit(tx, survey, 'asset_committed', {
        assetId: asset.id,
        filename: asset.filename,
        size: asset.size,
        sha256,
      });
    });
    Object.assign(asset, { status: AssetStatus.COMMITTED, sha256, committedAt });
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
      ? await this.em.find(
          SurveyAsset,
          { surveyId: { $in: [...surveyIds] }, status: AssetStatus.COMMITTED },
          { orderBy: { createdAt: 'asc', id: 'asc' } },
        )
      : [];
    const bySurvey = new Map<string, SurveyAsset[]>(surveyIds.map((id) => [id, []]));
    for (const asset of found) bySurvey.get(asset.surveyId)?.push(asset);
    return bySurvey;
  }

  /** A signed link to the bytes of a committed asset; null while it is pending. */
  async downloadUrl(asset: SurveyAsset, expiresInSeconds = DOWNLOAD_URL_SECONDS): Promise<string | null> {
    if (asset.status !== AssetStatus.COMMITTED) return null;
    return this.settings.storage.presignGet(asset.storageKey, {
      expiresInSeconds,
      baseUrl: this.settings.publicUrl,
      contentType: asset.contentType,
      filename: asset.filename,
    });
  }

  /** When a link that `downloadUrl` makes now stops working; null while the asset is pending. */
  downloadUrlExpiresAt(asset: SurveyAsset): Date | null {
    return asset.status === AssetStatus.COMMITTED ? new Date(Date.now() + DOWNLOAD_URL_SECONDS * 1000) : null;
  }
}

/** Deletes the assets presigned and never committed, once their upload URL expired: rows and staged bytes. */
export function sweepAssetUploads(em: EntityManager, storage: ObjectStorage, now = new Date()): Promise<number> {
  return sweepReservations(em, storage, SurveyAsset, { status: AssetStatus.PENDING }, now);
}
