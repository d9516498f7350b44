// The sticky PR comment: one per pull request, found by its hidden marker and its author, edited in place.
import { COMMENT_MARKER } from '../report/markdown.js';
import { apiStatus, type GitHub } from './github.js';
import { GITHUB_TEXT_LIMIT, trimMarkdown } from './trim.js';

export { COMMENT_MARKER };
/** The login of the default GITHUB_TOKEN's comments. */
export const ACTIONS_BOT = 'github-actions[bot]';

/** The pull request a comment goes to. */
export interface CommentTarget {
  owner: string;
  repo: string;
  issueNumber: number;
}

interface CommentAuthor {
  login: string;
  type?: string;
}

/** The comment body: the markdown, marked (the comment rendering starts with the marker) and trimmed under GitHub's limit. */
export function commentBody(markdown: string): string {
  return trimMarkdown(
    markdown.startsWith(COMMENT_MARKER) ? markdown : `${COMMENT_MARKER}\n${markdown}`,
    GITHUB_TEXT_LIMIT,
    '_The comment was trimmed to fit; the full report is in the check run, the job summary and report.json._',
  );
}

/**
 * The login the token posts as, or null when the API will not say: an installation token (the
 * default GITHUB_TOKEN) gets 403 on GET /user.
 */
export async function ownLogin(gh: GitHub): Promise<string | null> {
  try {
    const { data } = await gh.rest.users.getAuthenticated();
    return data.login;
  } catch (err) {
    const status = apiStatus(err);
    if (status === 401 || status === 403 || status === 404) return null;
    throw err;
  }
}

/** Whether a comment is this action's: it carries the marker and the token's login (or, unknown, a bot's). */
export function isOwnComment(
  comment: { body?: string | null; user?: CommentAuthor | null },
  login: string | null,
): boolean {
  if (!comment.body?.includes(COMMENT_MARKER) || !comment.user) return false;
  if (login !== null) return comment.user.login === login;
  return comment.user.login === ACTIONS_BOT || comment.user.type === 'Bot';
}

/** Edits the action's earlier comment in place, or creates it when there is none. */
export async function upsertComment(
  gh: GitHub,
  target: CommentTarget,
  markdown: string,
): Promise<{ action: 'created' | 'updated'; id: number; url: string }> {
  const body = commentBody(markdown);
  const login = await ownLogin(gh);
  const comments = await gh.paginate(gh.rest.issues.listComments, {
    owner: target.owner,
    repo: target.repo,
    issue_number: target.issueNumber,
    per_page: 100,
  });
  // The oldest one keeps its place in the conversation.
  const existing = comments.find((c) => isOwnComment(c, login));
  if (existing) {
    const { data } = await gh.rest.issues.updateComment({
      owner: target.owner,
      repo: target.repo,
      comment_id: existing.id,
      body,
    });
    return { action: 'updated', id: data.id, url: data.html_url };
  }
  const { data } = await gh.rest.issues.createComment({
    owner: target.owner,
    repo: target.repo,
    issue_number: target.issueNumber,
    body,
  });
  return { action: 'created', id: data.id, url: data.html_url };
}
