import { AppError, ErrorCode } from '#lib/errors.js';
import { PostStatus, type Post } from './post.entity.js';

/**
 * The content item state machine. Each action names the states it applies to; anything else is
 * a CONFLICT that names the current state (the REST adapter turns it into 409 with `currentState`).
 *
 *   draft|suggested --edit--> same state
 *   suggested --approve--> queued (has scheduledAt) | draft
 *   suggested --reject--> rejected
 *   queued|failed --reschedule--> queued (future time)
 *   failed --retry--> queued (due now)
 *   queued --publisher--> publishing --> published | failed
 */
export type PostAction =
  'edit' | 'approve' | 'reject' | 'reschedule' | 'retry' | 'update' | 'delete' | 'startPublishing' | 'finishPublishing';

export const ALLOWED_FROM: Record<PostAction, readonly PostStatus[]> = {
  edit: [PostStatus.DRAFT, PostStatus.SUGGESTED],
  approve: [PostStatus.SUGGESTED],
  reject: [PostStatus.SUGGESTED],
  reschedule: [PostStatus.QUEUED, PostStatus.FAILED],
  retry: [PostStatus.FAILED],
  update: [PostStatus.DRAFT, PostStatus.SUGGESTED, PostStatus.REJECTED, PostStatus.QUEUED, PostStatus.FAILED],
  delete: [
    PostStatus.DRAFT,
    PostStatus.SUGGESTED,
    PostStatus.REJECTED,
    PostStatus.QUEUED,
    PostStatus.PUBLISHED,
    PostStatus.FAILED,
  ],
  startPublishing: [PostStatus.QUEUED],
  finishPublishing: [PostStatus.PUBLISHING],
};

const DESCRIPTION: Record<PostAction, string> = {
  edit: 'Only a draft or a suggestion draft can be edited',
  approve: 'Only a suggestion draft can be approved',
  reject: 'Only a suggestion draft can be rejected',
  reschedule: 'Only a queued or failed post can be rescheduled',
  retry: 'Only a failed post can be retried',
  update: 'A post that is publishing or published cannot be changed',
  delete: 'A post that is being published cannot be deleted',
  startPublishing: 'Only a queued post can start publishing',
  finishPublishing: 'Only a publishing post can finish publishing',
};

export function canApply(action: PostAction, status: PostStatus): boolean {
  return ALLOWED_FROM[action].includes(status);
}

/** Throws CONFLICT naming the current state unless `action` applies to the post as it stands. */
export function assertCanApply(action: PostAction, post: Pick<Post, 'status'>): void {
  if (canApply(action, post.status)) return;
  throw new AppError(ErrorCode.CONFLICT, `${DESCRIPTION[action]}; this one is ${post.status}`, {
    details: { currentState: post.status, allowedStates: [...ALLOWED_FROM[action]] },
  });
}

/** The state approval leads to: scheduled suggestions join the queue, the others become drafts. */
export function approvedStatus(post: Pick<Post, 'scheduledAt'>): PostStatus {
  return post.scheduledAt ? PostStatus.QUEUED : PostStatus.DRAFT;
}
