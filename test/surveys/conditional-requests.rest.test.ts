import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  expectConditionalChanges,
  expectEntityTags,
  expectOneOfTwoWriters,
  type VersionedResource,
} from '#test/support/conditional-requests.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

const DOMAIN = 'conditional.example';

describe('surveys conditional requests', () => {
  let platform: TestPlatform;
  let base: string;
  let surveyor: Record<string, string>;

  beforeAll(async () => {
    platform = await startTestPlatform({ ALLOWED_EMAIL_DOMAINS: DOMAIN });
    base = platform.urls.surveysRest;
    surveyor = { authorization: `Bearer ${await platform.token('surveyor', undefined, `surveyor@${DOMAIN}`)}` };
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const newSurvey = async (): Promise<VersionedResource> => {
    const created = await rest('POST', `${base}/api/surveys`, { venueName: 'Versioned venue' }, surveyor);
    expect(created.status).toBe(201);
    return {
      url: `${base}/api/surveys/${created.body.id}`,
      headers: surveyor,
      change: { method: 'PUT', body: (notes) => ({ notes }), field: 'notes' },
    };
  };

  it('tags a survey with a strong ETag that answers 304 until it changes', async () => {
    await expectEntityTags(await newSurvey());
  });

  it('changes a draft only while If-Match holds; otherwise 412 and nothing changes', async () => {
    await expectConditionalChanges(await newSurvey());
  });

  it('lets exactly one of two writers holding the same ETag win', async () => {
    await expectOneOfTwoWriters(await newSurvey());
  });

  it('gives a survey a new ETag when an asset of it is added, since its answer lists them', async () => {
    const survey = await newSurvey();
    const before = await rest('GET', survey.url, undefined, surveyor);
    const presigned = await rest(
      'POST',
      `${survey.url}/assets/presign`,
      { filename: 'a.png', contentType: 'image/png', size: 10 },
      surveyor,
    );
    expect(presigned.status).toBe(200);
    const after = await rest('GET', survey.url, undefined, {
      ...surveyor,
      'if-none-match': before.headers.get('etag')!,
    });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
  });

  it('answers a 412 rather than a 404 when If-Match names a survey that does not exist', async () => {
    const missing = await rest(
      'PUT',
      `${base}/api/surveys/00000000-0000-4000-8000-000000000000`,
      { notes: 'x' },
      { ...surveyor, 'if-match': '*' },
    );
    expect(missing.status).toBe(412);
    const legacy = await rest(
      'PUT',
      `${base}/api/surveys/00000000-0000-4000-8000-000000000000`,
      { notes: 'x' },
      surveyor,
    );
    expect(legacy.status).toBe(404);
  });
});
