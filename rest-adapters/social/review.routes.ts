import { jsonBody, type RestRoute } from '#lib/rest/rest.js';
import type { Answered, RunOperation, OperationDocument } from '#lib/rest/run-operation.js';
import {
  ApproveByReviewLinkDocument,
  RejectByReviewLinkDocument,
  ReviewByTokenDocument,
} from './operations.generated.js';
import { reviewDecisionSchema, reviewedPostSchema, restPost } from './social.bodies.js';

const TOKEN = { token: 'The token of the review link' };

/**
 * `/api/review/{token}`: a client without an account sees one suggested post and approves or
 * rejects it. The token is the credential; every rule lives in the subgraph, the limit per client
 * too, so that these routes and the GraphQL fields count as one (the client's address reaches it
 * through the gateway, IPv6 per /64).
 */
export function reviewRoutes(run: RunOperation): RestRoute[] {
  const rateLimit = 'subgraph';
  const decision = <Result>(
    operation: OperationDocument<Result, { token: string; comment?: string | null }>,
    postOf: (data: Answered<Result>) => { status: string; platforms: string[] },
    verb: 'approve' | 'reject',
    operationId: string,
  ): RestRoute => ({
    method: 'post',
    path: `/api/review/:token/${verb}`,
    rateLimit,
    summary:
      `${verb === 'approve' ? 'Approve' : 'Reject'} the post of a review link ({ comment? }); 409 once ` +
      `it is no longer suggested, 410 when the link expired or was revoked`,
    doc: {
      operationId,
      tag: 'review',
      params: TOKEN,
      body: reviewDecisionSchema,
      answer: { status: 200, description: 'The post after the decision', json: reviewedPostSchema },
      problems: [409, 410, 429],
      open: true,
    },
    handler: async (req, res) => {
      const body = jsonBody(req);
      res.json(restPost(postOf(await run(operation, { token: req.params.token, comment: body.comment ?? null }, req))));
    },
  });
  return [
    {
      method: 'get',
      path: '/api/review/:token',
      rateLimit,
      summary:
        'The post of a review link: content, platforms, media URLs, scheduled time, brand name (no account needed); ' +
        '404 unknown, 410 expired or revoked, 409 once it is no longer suggested',
      doc: {
        operationId: 'getPostByReviewLink',
        tag: 'review',
        params: TOKEN,
        answer: { status: 200, description: 'The post to review', json: reviewedPostSchema },
        problems: [409, 410, 429],
        open: true,
      },
      handler: async (req, res) => {
        const { reviewByToken } = await run(ReviewByTokenDocument, { token: req.params.token }, req);
        res.json(restPost(reviewByToken));
      },
    },
    decision(ApproveByReviewLinkDocument, (data) => data.approveByReviewLink, 'approve', 'approveByReviewLink'),
    decision(RejectByReviewLinkDocument, (data) => data.rejectByReviewLink, 'reject', 'rejectByReviewLink'),
  ];
}
