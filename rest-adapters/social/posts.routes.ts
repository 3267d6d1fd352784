import { z } from 'zod';
import { jsonBody, numberParam, stringParam, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { ifMatchVersion } from '#lib/rest/conditional-requests.js';
import { pageBody } from '#lib/data/pagination.js';
import { graphqlEnum } from '#lib/rest/rest-enums.js';
import { postInput, restPost, postInputSchema, postPage, postQuery, postSchema } from './social.bodies.js';
import {
  CreatePostDocument,
  DeletePostDocument,
  PostDocument,
  PostPageDocument,
  UpdatePostDocument,
} from './operations.generated.js';

const POST_ID = { postId: 'Post id' };

/** `/api/posts`: each route runs one operation of operations/posts.graphql; the rules live in the subgraph. */
export function postRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/posts',
      summary: 'List your posts, newest first (page, limit, brandId, status)',
      list: 'pages',
      doc: {
        operationId: 'listPosts',
        tag: 'posts',
        query: postQuery,
        answer: { status: 200, description: 'A page of posts', json: postPage },
      },
      handler: async (req, res) => {
        const { postPage } = await run(
          PostPageDocument,
          {
            page: numberParam(req.query.page),
            limit: numberParam(req.query.limit),
            brandId: stringParam(req.query.brandId),
            status: graphqlEnum(stringParam(req.query.status)),
          },
          req,
        );
        res.json(pageBody({ ...postPage, items: postPage.items.map(restPost) }));
      },
    },
    {
      method: 'post',
      path: '/api/posts',
      summary: 'Create a post (content required; brandId when you have several brands)',
      created: '/api/posts/{id}',
      doc: {
        operationId: 'createPost',
        tag: 'posts',
        body: postInputSchema,
        answer: {
          status: 201,
          description: 'The new post',
          json: postSchema,
          headers: z.object({ Location: z.string().meta({ description: 'Path of the new post' }) }),
        },
      },
      handler: async (req, res) => {
        const { createPost } = await run(CreatePostDocument, { input: postInput(jsonBody(req)) }, req);
        res.status(201).json(restPost(createPost));
      },
    },
    {
      method: 'get',
      path: '/api/posts/:postId',
      summary: 'Get a post',
      versioned: true,
      doc: {
        operationId: 'getPost',
        tag: 'posts',
        params: POST_ID,
        answer: { status: 200, description: 'The post', json: postSchema },
      },
      handler: async (req, res) => {
        const { post } = await run(PostDocument, { id: req.params.postId }, req, { lookup: 'Post' });
        res.json(restPost(post));
      },
    },
    {
      method: 'put',
      path: '/api/posts/:postId',
      summary: 'Update a post',
      versioned: true,
      doc: {
        operationId: 'updatePost',
        tag: 'posts',
        params: POST_ID,
        body: postInputSchema,
        answer: { status: 200, description: 'The post as changed', json: postSchema },
        problems: [409],
      },
      handler: async (req, res) => {
        const { updatePost } = await run(
          UpdatePostDocument,
          {
            id: req.params.postId,
            input: postInput(jsonBody(req)),
            ifVersion: ifMatchVersion(req),
          },
          req,
        );
        res.json(restPost(updatePost));
      },
    },
    {
      method: 'delete',
      path: '/api/posts/:postId',
      summary: 'Delete a post',
      versioned: true,
      doc: {
        operationId: 'deletePost',
        tag: 'posts',
        params: POST_ID,
        answer: { status: 204, description: 'Deleted' },
        problems: [409],
      },
      handler: async (req, res) => {
        await run(DeletePostDocument, { id: req.params.postId, ifVersion: ifMatchVersion(req) }, req);
        res.status(204).end();
      },
    },
  ];
}
