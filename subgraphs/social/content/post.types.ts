import { ConnectionType, PageType } from '#lib/data/pagination.js';
import { Post } from './post.entity.js';

export const PostConnection = ConnectionType(Post, 'Post');
export const PostPage = PageType(Post, 'Post');
export const QueuePage = PageType(Post, 'Queue');
export const SuggestionConnection = ConnectionType(Post, 'Suggestion');
