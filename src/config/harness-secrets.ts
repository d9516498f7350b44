// The runner's secrets by name. stategate.yml comes from the checkout under review, so naming one of
// these there must never be enough to have the harness hand it to anyone: not to an agent, not as a
// judge's key, not inside a URL or image name the harness connects to.

/** The variable holding the admin database URL; it expands only into `database.url`. */
export const DATABASE_URL_VAR = 'STATEGATE_DATABASE_URL';

/**
 * The workflow's tokens: they let a process post as the repository (GITHUB_TOKEN, the action's
 * `github-token` input, GH_TOKEN as workflows set it for the gh CLI), upload artifacts
 * (ACTIONS_RUNTIME_TOKEN) or mint cloud credentials (ACTIONS_ID_TOKEN_REQUEST_*).
 */
export function isWorkflowToken(name: string): boolean {
  return (
    name === 'GITHUB_TOKEN' ||
    name === 'GH_TOKEN' ||
    /^INPUT_GITHUB[-_]TOKEN$/i.test(name) ||
    name === 'ACTIONS_RUNTIME_TOKEN' ||
    name.startsWith('ACTIONS_ID_TOKEN_REQUEST_')
  );
}

/** A workflow token or the admin database URL: what no agent and no judge ever receives. */
export function isHarnessSecret(name: string): boolean {
  return isWorkflowToken(name) || name === DATABASE_URL_VAR;
}
