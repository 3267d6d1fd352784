/** Name of the HttpOnly cookie that carries a survey session token in browsers (set by the REST verify route). */
export const SESSION_COOKIE = 'survey_session';
