// The workflow `stategate init` writes to .github/workflows/stategate.yml: the action on every pull
// request, with the agent's language toolchain installed, a time limit, and a newer push cancelling
// the run of the one before it (a pull request's check is about its newest commit).

/** The action's reference in the workflows the project shows; the release process keeps the tag moving. */
export const ACTION_USES = 'OWNER/stategate@v1';

export type ScaffoldLang = 'python' | 'typescript';

/** The steps that install the agent's toolchain, indented for a job's steps. */
function toolchainSteps(lang: ScaffoldLang): string {
  if (lang === 'python') {
    return `      # The agent's own interpreter; the action brings Stategate and its database.
      - uses: actions/setup-python@v5
        with:
          python-version: '3.12'
`;
  }
  return `      # The agent's own Node; the action brings Stategate and its database.
      - uses: actions/setup-node@v4
        with:
          node-version: 20
`;
}

/** The workflow file for an agent in `lang`. */
export function workflowYaml(lang: ScaffoldLang): string {
  return `# Stategate on every pull request: the base and the head agent as a pinned pair on the same
# scenarios; the check run, the PR comment and the job summary say PASS, WARN or BLOCK.
name: stategate
on: pull_request

permissions:
  contents: read
  checks: write
  pull-requests: write

# A new push to the pull request cancels the run of the commit before it.
concurrency:
  group: stategate-\${{ github.event.pull_request.number }}
  cancel-in-progress: true

jobs:
  gate:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
        with:
          # The job's token stays off disk: the agent under review runs in this checkout. With the
          # history, the base commit needs no fetch.
          persist-credentials: false
          fetch-depth: 0
${toolchainSteps(lang)}      - uses: ${ACTION_USES}
        with:
          config: stategate.yml
          fail-on: block
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: stategate-report
          path: .stategate/
`;
}
