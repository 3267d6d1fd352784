import { AppError } from '../../lib/errors.js';
import { numberParam, stringParam, type RestRoute, type RunOperation } from '../../lib/rest.js';
import { pageBody, type Page } from '../../lib/pagination.js';
import { pickBody } from './rest.helpers.js';

type Post = Record<string, unknown>;

const POST_BODY_FIELDS = ['brandId', 'campaignId', 'content', 'platforms', 'mediaIds', 'scheduledAt', 'status'] as const;

/** `/api/posts`: each route runs one operation of operations/posts.graphql; the rules live in the subgraph. */
export function postRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/posts',
      summary: 'List your posts, newest first (page, limit, brandId, status)',
      handler: async (req, res) => {
        const { postPage } = await run<{ postPage: Page<Post> }>(
          'PostPage',
          {
            page: numberParam(req.query.page),
            limit: numberParam(req.query.limit),
            brandId: stringParam(req.query.brandId),
            status: stringParam(req.query.status),
          },
          req,
        );
        res.json(pageBody(postPage));
      },
    },
    {
      method: 'post',
      path: '/api/posts',
      summary: 'Create a post (content required; brandId when you have several brands)',
      handler: async (req, res) => {
        const { createPost } = await run<{ createPost: Post }>('CreatePost', { input: pickBody(req, POST_BODY_FIELDS) }, req);
        res.status(201).location(`/api/posts/${createPost.id as string}`).json(createPost);
      },
    },
    {
      method: 'get',
      path: '/api/posts/:postId',
      summary: 'Get a post',
      handler: async (req, res) => {
        const { post } = await run<{ post: Post | null }>('Post', { id: req.params.postId }, req);
        if (!post) throw AppError.notFound('Post');
        res.json(post);
      },
    },
    {
      method: 'put',
      path: '/api/posts/:postId',
      summary: 'Update a post',
      handler: async (req, res) => {
        const { updatePost } = await run<{ updatePost: Post }>('UpdatePost', { id: req.params.postId, input: pickBody(req, POST_BODY_FIELDS) }, req);
        res.json(updatePost);
      },
    },
    {
      method: 'delete',
      path: '/api/posts/:postId',
      summary: 'Delete a post',
      handler: async (req, res) => {
        await run<{ deletePost: string }>('DeletePost', { id: req.params.postId }, req);
        res.status(204).end();
      },
    },
  ];
}
