// Everything the action posts to GitHub, with refusals turned into warnings: posting never decides the verdict.
import type { CheckOutcome } from './check-run.js';
import { CHECK_NAME, completeCheckRun, startCheckRun } from './check-run.js';
import { upsertComment } from './comment.js';
import type { EventContext } from './event.js';
import { createGitHub, type GitHub } from './github.js';
import { postingWarning } from './permissions.js';
import { pullRequestNumber } from './pull-request.js';

/** How the run talks: info lines and warnings (core.info / core.warning in the action). */
export interface Say {
  info(message: string): void;
  warning(message: string): void;
}

/** The GitHub side of one run: the client, the check run once started, and what was refused. */
export class Posting {
  private checkId: number | null = null;
  private checkRefused = false;

  private constructor(
    private readonly gh: GitHub | null,
    private readonly event: EventContext,
    private readonly say: Say,
    private readonly fork: boolean,
    private readonly checkName: string,
  ) {}

  /** A posting context; with an empty token nothing is posted and the run says so once. */
  static async create(
    token: string,
    apiUrl: string,
    event: EventContext,
    say: Say,
    checkName = CHECK_NAME,
  ): Promise<Posting> {
    const fork = event.pullRequest?.fork ?? false;
    if (!token) {
      say.warning(
        'github-token is empty: the check run and the comment are skipped; the report and the job summary are written.',
      );
      return new Posting(null, event, say, fork, checkName);
    }
    return new Posting(await createGitHub(token, apiUrl, say.warning), event, say, fork, checkName);
  }

  private get target() {
    return {
      owner: this.event.owner,
      repo: this.event.repo,
      headSha: this.event.headSha,
      name: this.checkName,
    };
  }

  /** Creates the check run in_progress; a refusal is a warning and later updates are skipped. */
  async start(detailsUrl?: string): Promise<void> {
    if (!this.gh) return;
    try {
      this.checkId = await startCheckRun(this.gh, this.target, detailsUrl);
      this.say.info(`Check run ${this.checkName} started on ${this.event.headSha.slice(0, 12)}.`);
    } catch (err) {
      this.checkRefused = true;
      this.say.warning(postingWarning('check', err, this.fork));
    }
  }

  /** Completes the check run with the outcome (warning on refusal). */
  async complete(outcome: CheckOutcome): Promise<void> {
    if (!this.gh || this.checkRefused) return;
    try {
      const done = await completeCheckRun(this.gh, this.target, this.checkId, outcome);
      this.say.info(
        `Check run ${this.checkName}: ${outcome.conclusion} (${outcome.title})${done.url ? ` ${done.url}` : ''}`,
      );
    } catch (err) {
      this.say.warning(postingWarning('check', err, this.fork));
    }
  }

  /** Posts or edits the sticky comment on the run's pull request, when there is one. */
  async comment(markdown: string): Promise<void> {
    if (!this.gh) return;
    try {
      const number = await pullRequestNumber(this.gh, this.event);
      if (number === null) {
        this.say.info('No pull request for this run: no comment posted.');
        return;
      }
      const done = await upsertComment(
        this.gh,
        { owner: this.event.owner, repo: this.event.repo, issueNumber: number },
        markdown,
      );
      this.say.info(`Comment ${done.action} on #${number}: ${done.url}`);
    } catch (err) {
      this.say.warning(postingWarning('comment', err, this.fork));
    }
  }
}
