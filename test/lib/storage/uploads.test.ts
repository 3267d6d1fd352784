import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '#lib/config.js';
import { looksLike } from '#lib/http/content-type.js';
import { createLogger } from '#lib/observability/logger.js';
import { checkDeclaration, startUploadSweeper, SWEEP_GRACE_MS, sweepBefore } from '#lib/storage/uploads.js';

const logger = createLogger(loadConfig({ LOG_LEVEL: 'silent' }));

describe('upload declarations', () => {
  const photos = { maxBytes: 100, allowedTypes: ['image/png', 'image/jpeg'] };

  it('answer the normalized type, and refuse another type or a size out of range, naming the field', () => {
    expect(checkDeclaration(photos, { contentType: 'image/JPG; q=1', size: 100 })).toBe('image/jpeg');
    expect(() => checkDeclaration(photos, { contentType: 'image/gif', size: 1 })).toThrow(
      expect.objectContaining({ code: 'BAD_USER_INPUT', fields: [expect.objectContaining({ field: 'contentType' })] }),
    );
    expect(() => checkDeclaration(photos, { contentType: 'image/png', size: 101 })).toThrow(
      expect.objectContaining({ code: 'PAYLOAD_TOO_LARGE', fields: [expect.objectContaining({ field: 'size' })] }),
    );
    expect(() => checkDeclaration(photos, { contentType: 'image/png', size: 0 })).toThrow(
      expect.objectContaining({ fields: [expect.objectContaining({ field: 'size' })] }),
    );
    // A policy open to any type still wants a media type; the size may be unknown (a multipart part).
    expect(checkDeclaration({ maxBytes: 10, allowedTypes: null }, { contentType: null })).toBe(
      'application/octet-stream',
    );
    expect(() => checkDeclaration({ maxBytes: 10, allowedTypes: null }, { contentType: 'not a type' })).toThrow(
      expect.objectContaining({ code: 'BAD_USER_INPUT' }),
    );
  });

  it('know films and text by their first bytes', () => {
    const box = (brand: string) => Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from(`ftyp${brand}`)]);
    expect(looksLike('video/mp4', box('isom'))).toBe(true);
    expect(looksLike('video/mp4', box('heic'))).toBe(false);
    expect(looksLike('video/quicktime', box('qt  '))).toBe(true);
    expect(looksLike('video/webm', Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 1]))).toBe(true);
    expect(looksLike('text/csv', Buffer.from('name,e-mail\nAda,'))).toBe(true);
    expect(looksLike('text/csv', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0]))).toBe(false);
  });
});

describe('the upload sweeper', () => {
  it('sweeps every period, not at start, and stops gracefully', async () => {
    const rounds: Date[] = [];
    const sweeper = startUploadSweeper({
      name: 'test',
      logger,
      everyMs: 20,
      sweep: (now) => Promise.resolve(rounds.push(now)),
    });
    expect(rounds).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 110));
    await sweeper.stop();
    const swept = rounds.length;
    expect(swept).toBeGreaterThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(rounds).toHaveLength(swept);
  });

  it('keeps sweeping after a failed round', async () => {
    let calls = 0;
    const sweeper = startUploadSweeper({
      name: 'test',
      logger,
      everyMs: 10,
      sweep: () => (++calls === 1 ? Promise.reject(new Error('storage down')) : Promise.resolve(0)),
    });
    await new Promise((resolve) => setTimeout(resolve, 80));
    await sweeper.stop();
    expect(calls).toBeGreaterThanOrEqual(2);
  });

  it('takes a reservation once its URL expired more than the grace ago', () => {
    const now = new Date('2026-11-23T12:00:00Z');
    expect(sweepBefore(now).getTime()).toBe(now.getTime() - SWEEP_GRACE_MS);
  });
});
