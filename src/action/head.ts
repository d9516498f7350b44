// The head side: the directory head-path names, checked before anything runs. On pull_request_target
// the workspace is the base branch, so a head that is not the pull request's head commit would post
// the base's results on the PR: refused, saying how to check the head out.
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { SAFE_GIT } from '../run/checkout.js';
import { harnessExecutable } from '../sandbox/harness-path.js';
import type { EventContext } from './event.js';

const exec = promisify(execFile);

/** Thrown when head-path is not a checkout of the head the event is about. */
export class HeadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HeadError';
  }
}

/** Checks the head directory: it exists, and on pull_request_target it is the PR head commit. */
export async function checkHead(event: EventContext, workspace: string, headPath: string): Promise<void> {
  const dir = resolve(workspace, headPath);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new HeadError(
      `head-path: ${headPath} is not a directory of the workspace: check the head out there first`,
    );
  }
  if (event.name !== 'pull_request_target') return;
  const sha = await exec(harnessExecutable('git'), [...SAFE_GIT, 'rev-parse', 'HEAD'], { cwd: dir }).then(
    (r) => r.stdout.trim(),
    () => null,
  );
  if (sha !== event.headSha) {
    throw new HeadError(
      `pull_request_target: the head (head-path: ${headPath}) is at ${sha ?? 'no commit'}, not the pull request's head ${event.headSha}. ` +
        'A pull_request_target workspace is the base branch: check the head out into a subdirectory ' +
        '(actions/checkout with ref: ${{ github.event.pull_request.head.sha }}, path: head, persist-credentials: false) and set head-path: head.',
    );
  }
}
