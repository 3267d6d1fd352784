import { ConnectionType, PageType } from '#lib/data/pagination.js';
import { Post } from './post.entity.js';
import { DeletePayloadType } from '#lib/subgraph/delete-payload.js';

export const PostConnection = ConnectionType(Post, 'Post');
export const PostPage = PageType(Post, 'Post');
export const QueuePage = PageType(Post, 'Queue');
export const SuggestionConnection = ConnectionType(Post, 'Suggestion');

export const DeletePostPayload = DeletePayloadType(Post, 'Post');
