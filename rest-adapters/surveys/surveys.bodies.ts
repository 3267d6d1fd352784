import { z } from 'zod';
import { idSchema, instantSchema, pageOf, pageQuery } from '#lib/rest/rest-schemas.js';
import { inputOf } from '#lib/rest/rest-bodies.js';

/**
 * The bodies of the venue survey REST contract (the field names legacy clients rely on), once: the routes'
 * OpenAPI documentation, and the shape the adapter checks a JSON body against. What a value may
 * be (a capacity of 0 or more, an allowed file type) is the surveys subgraph's rule.
 */

const nullableText = (description: string) => z.string().nullable().meta({ description });
const optionalText = (description: string) => z.string().nullish().meta({ description });

export const assetSchema = z
  .object({
    id: idSchema,
    assetId: idSchema.meta({ description: 'The same as id' }),
    surveyId: idSchema,
    filename: z.string(),
    contentType: z.string().meta({ description: 'Checked from the first bytes on commit' }),
    size: z.int().meta({ description: 'Bytes' }),
    sha256: nullableText('SHA-256 of the bytes (hex), once committed'),
    status: z.enum(['pending', 'committed']),
    createdAt: instantSchema,
    committedAt: instantSchema.nullable(),
    downloadUrl: nullableText('A short-lived URL to download the file (committed assets)'),
    downloadUrlExpiresAt: instantSchema.nullable(),
  })
  .meta({ id: 'SurveyAsset', description: 'A file of a survey (a photo, a floor plan)' });

export const surveySchema = z
  .object({
    id: idSchema,
    venueName: z.string(),
    address: nullableText('Address of the venue'),
    contactName: nullableText('Person to contact at the venue'),
    contactPhone: nullableText('Phone number of that person'),
    capacity: z.int().nullable().meta({ description: 'How many guests the venue holds' }),
    amenities: z.array(z.string()),
    notes: nullableText('Free notes'),
    contactId: idSchema.nullable().meta({ description: 'A contact of the contacts service' }),
    status: z.enum(['draft', 'submitted']),
    submittedAt: instantSchema.nullable(),
    ownerEmail: z.string().meta({ description: 'Who made it' }),
    createdAt: instantSchema,
    updatedAt: instantSchema,
    assets: z.array(assetSchema).meta({ description: 'Its committed and pending assets' }),
  })
  .meta({ id: 'Survey', description: 'A survey of a venue' });

export const surveyInputSchema = inputOf(surveySchema, {
  venueName: optionalText('Name of the venue (required on create)'),
  address: optionalText('Address of the venue'),
  contactName: optionalText('Person to contact at the venue'),
  contactPhone: optionalText('Phone number of that person'),
  capacity: z.int().nullish().meta({ description: 'How many guests the venue holds (0 or more)' }),
  amenities: z.array(z.string()).nullish().meta({ description: 'The list replaces the previous one' }),
  notes: optionalText('Free notes'),
  contactId: idSchema.nullish().meta({ description: 'A contact of the contacts service' }),
}).meta({
  id: 'SurveyInput',
  description: 'A survey to create (venueName required), or the fields of a draft to change',
});

export const presignInputSchema = z
  .strictObject({
    filename: z.string(),
    contentType: z.string().meta({ description: 'An image or PDF type' }),
    size: z.int().meta({ description: 'Bytes the upload will send' }),
  })
  .meta({ id: 'AssetPresignInput' });

export const presignSchema = z
  .object({
    assetId: idSchema,
    id: idSchema.meta({ description: 'The same as assetId' }),
    uploadUrl: z.string().meta({ description: 'Where to PUT the bytes' }),
    method: z.literal('PUT'),
    headers: z.record(z.string(), z.string()).meta({ description: 'Headers the PUT must send' }),
    expiresAt: instantSchema,
  })
  .meta({ id: 'AssetUpload', description: 'Where and how to send the bytes; commit them afterwards' });

export const commitInputSchema = z
  .strictObject({
    assetId: idSchema.meta({ description: 'The assetId the presign answered' }),
    sha256: optionalText('SHA-256 of the file (hex); when given, the stored bytes must match it'),
  })
  .meta({ id: 'AssetCommitInput' });

export const exportQuery = z.object({
  format: z.enum(['html', 'markdown', 'whatsapp']).meta({ description: 'The export format' }),
});

const userSchema = z
  .object({ email: z.string(), isAdmin: z.boolean().meta({ description: 'In ADMIN_EMAILS: sees every survey' }) })
  .meta({ id: 'SurveyUser' });

export const magicRequestSchema = z
  .strictObject({ email: z.string().meta({ description: 'Where to send the sign-in link' }) })
  .meta({ id: 'MagicLinkRequest' });
export const magicRequestedSchema = z
  .object({ message: z.string() })
  .meta({ id: 'MagicLinkRequested', description: 'The same answer for every address' });
export const magicVerifySchema = z
  .strictObject({ token: z.string().meta({ description: 'The token of the link' }) })
  .meta({ id: 'MagicLinkVerify' });
export const signInSchema = z
  .object({
    token: z.string().meta({ description: 'The session token (also set as the session cookie)' }),
    user: userSchema,
    expiresAt: instantSchema,
  })
  .meta({ id: 'SignIn' });
export const sessionSchema = z.object({ user: userSchema, expiresAt: instantSchema }).meta({ id: 'Session' });

export const surveyPage = pageOf(surveySchema, 'Survey');
export const surveyQuery = pageQuery.extend({
  status: z.enum(['draft', 'submitted']).optional().meta({ description: 'Only surveys in this status' }),
});
