import { describe, expect, it } from '@jest/globals';
import { graphqlEnum, restEnum, withGraphQLEnums, withRestEnums } from '../../../lib/rest/rest-enums.js';

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
});
