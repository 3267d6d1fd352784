import { describe, expect, it } from '@jest/globals';
import { AppError } from '#lib/errors.js';
import {
  graphqlEnum,
  graphqlEnumList,
  graphqlEnumOfWord,
  restEnum,
  withGraphQLEnums,
  withRestEnums,
} from '#lib/rest/rest-enums.js';

/** An enum as the generated operation types write it: a constant object of its values. */
const Network = { Mastodon: 'MASTODON', GoogleBusiness: 'GOOGLE_BUSINESS', X: 'X' } as const;

describe('enum values between REST bodies and the graph', () => {
  it('reads a REST word as the graph names it and writes it back the same', () => {
    for (const word of ['draft', 'api_key', 'needs_reconnect', 'publish_failed']) {
      const name = graphqlEnum(word);
      expect(name).toBe(word.toUpperCase());
      expect(restEnum(name as string)).toBe(word);
    }
  });

  it('passes on what is no REST word, for GraphQL to refuse by its variable', () => {
    expect(graphqlEnum('Draft')).toBe('Draft');
    expect(graphqlEnum('draft!')).toBe('draft!');
    expect(graphqlEnum(7)).toBe(7);
    expect(graphqlEnum(undefined)).toBeUndefined();
    expect(graphqlEnum(['queued', 'Failed'])).toEqual(['QUEUED', 'Failed']);
  });

  it('changes only the named fields of a body, and only those present', () => {
    expect(withGraphQLEnums({ status: 'suggested', content: 'draft' }, 'status', 'source')).toEqual({
      status: 'SUGGESTED',
      content: 'draft',
    });
    const post = { id: 'p1', status: 'QUEUED' as const, content: 'KEEP CASE', scheduledAt: null };
    expect(withRestEnums(post, 'status')).toEqual({
      id: 'p1',
      status: 'queued',
      content: 'KEEP CASE',
      scheduledAt: null,
    });
    expect(post.status).toBe('QUEUED');
    expect(restEnum(null)).toBeNull();
  });

  it('writes a list of values word by word', () => {
    expect(restEnum(['MASTODON', 'GOOGLE_BUSINESS'])).toEqual(['mastodon', 'google_business']);
    expect(withRestEnums({ platforms: ['X'], platform: 'X', status: 'PENDING' }, 'platforms', 'platform')).toEqual({
      platforms: ['x'],
      platform: 'x',
      status: 'PENDING',
    });
  });

  it("reads a list of names leniently into the enum's values, and refuses names of none on the field itself", () => {
    expect(graphqlEnumList([' Mastodon ', 'x', 'google_business', 'X'], Network, 'platforms', 'platforms')).toEqual([
      'MASTODON',
      'X',
      'GOOGLE_BUSINESS',
      'X',
    ]);
    expect(graphqlEnumList(null, Network, 'platforms', 'platforms')).toBeNull();
    expect(graphqlEnumList('mastodon', Network, 'platforms', 'platforms')).toBe('mastodon');
    const refusal = (names: unknown[]) => {
      try {
        graphqlEnumList(names, Network, 'platforms', 'platforms');
      } catch (error) {
        return error instanceof AppError ? [error.code, error.fields] : error;
      }
      return 'accepted';
    };
    expect(refusal(['mastodon', 'LinkedIn!', 'google-business', 'linkedin!', 'vine', 7])).toEqual([
      'BAD_USER_INPUT',
      [{ field: 'platforms', message: 'contains names that are not platforms: linkedin!, google-business, vine' }],
    ]);
  });

  it('reads a path word only as the exact REST word of a value', () => {
    expect(graphqlEnumOfWord(Network, 'google_business')).toBe('GOOGLE_BUSINESS');
    expect(graphqlEnumOfWord(Network, 'Mastodon')).toBeUndefined();
    expect(graphqlEnumOfWord(Network, 'myspace')).toBeUndefined();
  });
});
