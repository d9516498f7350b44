// A loopback server that plays GitHub's REST API for the calls the action makes. Every request is
// checked against GitHub's published OpenAPI description; a request it does not describe gets 400
// and is recorded as a violation, which a test then fails on. Answers are checked the same way.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GitHubOpenApi, type MatchedOperation } from './github-openapi.js';
import { checkRunJson, commentJson, privateUser, pullJson } from './github-responses.js';

type Json = Record<string, any>;

/** A request as the server saw it. */
export interface RecordedRequest {
  method: string;
  path: string;
  operationId: string | null;
  query: Record<string, string>;
  body: unknown;
  token: string | null;
  status: number;
}

/** A request (or an answer of ours) that GitHub's description does not allow. */
export interface Violation {
  method: string;
  path: string;
  problems: string[];
}

/** A posted annotation, with the id of the check run it was appended to. */
export type RecordedAnnotation = Json & { check_run_id: number };

/** A check run as GitHub would hold it. */
export interface CheckRunState {
  id: number;
  name: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  started_at: string | null;
  completed_at: string | null;
  details_url: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  annotations: Json[];
  /** How many PATCH requests it received. */
  updates: number;
}

/** An issue comment as GitHub would hold it. */
export interface CommentState {
  id: number;
  issue_number: number;
  body: string;
  user: { login: string; id: number; type: 'User' | 'Bot' };
  created_at: string;
  updated_at: string;
}

/** An open pull request the server knows, for GET /repos/{owner}/{repo}/pulls?head=. */
export interface PullRequestState {
  number: number;
  headSha: string;
  headOwner: string;
  headBranch: string;
}

export interface GitHubApiOptions {
  owner?: string;
  repo?: string;
  /** Who the token is: an installation token (the default GITHUB_TOKEN) gets 403 on GET /user. */
  identity?: { kind: 'installation' } | { kind: 'user'; login: string };
  pullRequests?: PullRequestState[];
}

const ACTIONS_BOT = { login: 'github-actions[bot]', id: 41898282, type: 'Bot' as const };
const FORBIDDEN = {
  message: 'Resource not accessible by integration',
  documentation_url: 'https://docs.github.com/rest',
  status: '403',
};

/** The running server: its URL, what it recorded, and switches for the fork case. */
export class GitHubApi {
  readonly requests: RecordedRequest[] = [];
  readonly violations: Violation[] = [];
  readonly checkRuns: CheckRunState[] = [];
  readonly comments: CommentState[] = [];
  /** Answer 403 to check-run writes / comment writes, as a fork PR's read-only token gets. */
  readonly forbid = { checks: false, comments: false };
  url = '';
  private nextId = 1_000_000_000 + Math.floor(Math.random() * 1_000_000);
  private readonly openapi = GitHubOpenApi.load();
  private readonly server = createServer((req, res) => {
    this.handle(req, res).catch((err: Error) => {
      this.violations.push({
        method: req.method ?? '',
        path: req.url ?? '',
        problems: [`server error: ${err.stack}`],
      });
      if (!res.headersSent) res.writeHead(500).end();
    });
  });

  constructor(private readonly opts: GitHubApiOptions = {}) {}

  get owner(): string {
    return this.opts.owner ?? 'acme';
  }

  get repo(): string {
    return this.opts.repo ?? 'refunds';
  }

  /** Every annotation posted to any check run, in order. */
  get annotations(): RecordedAnnotation[] {
    return this.checkRuns.flatMap((c) => c.annotations.map((a) => ({ ...a, check_run_id: c.id })));
  }

  /** Listens on 127.0.0.1 on a free port. */
  async start(): Promise<this> {
    await new Promise<void>((ok) => this.server.listen(0, '127.0.0.1', ok));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((ok) => this.server.close(() => ok()));
  }

  /** Seeds a comment written by someone else (a person, another bot). */
  addComment(issueNumber: number, body: string, user: { login: string; type: 'User' | 'Bot' }): CommentState {
    const now = new Date().toISOString();
    const comment = {
      id: this.id(),
      issue_number: issueNumber,
      body,
      user: { ...user, id: this.id() },
      created_at: now,
      updated_at: now,
    };
    this.comments.push(comment);
    return comment;
  }

  private id(): number {
    return this.nextId++;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const auth = req.headers.authorization ?? '';
    const token = /^(?:token|bearer)\s+(.+)$/i.exec(auth)?.[1] ?? null;
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      operationId: null,
      query: Object.fromEntries(url.searchParams),
      body: undefined,
      token,
      status: 0,
    };
    this.requests.push(record);
    const send = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'x-github-request-id': randomBytes(8).toString('hex').toUpperCase(),
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4999',
        'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
        ...headers,
      });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    const refuse = (problems: string[]) => {
      this.violations.push({ method, path: url.pathname + url.search, problems });
      send(400, {
        message: `Invalid request.\n\n${problems.join('\n')}`,
        documentation_url: 'https://docs.github.com/rest',
      });
    };

    const match = this.openapi.match(method, url.pathname);
    if ('error' in match) return refuse([match.error]);
    record.operationId = match.operationId;

    let body: unknown;
    if (raw.length > 0) {
      if (!/^application\/json/.test(req.headers['content-type'] ?? '')) {
        return refuse([
          `request body sent as ${req.headers['content-type'] ?? 'no content type'}, not application/json`,
        ]);
      }
      try {
        body = JSON.parse(raw);
      } catch {
        return refuse(['request body is not JSON']);
      }
    }
    record.body = body;
    const problems = this.openapi.validateRequest(match, url.searchParams, body, raw.length > 0);
    if (problems.length > 0) return refuse(problems);
    if (!token)
      return send(401, {
        message: 'Requires authentication',
        documentation_url: 'https://docs.github.com/rest',
      });

    const answer = this.route(match, url.searchParams, body as Json);
    const answerProblems = this.openapi.validateResponse(match, answer.status, answer.body);
    if (answerProblems.length > 0) {
      this.violations.push({
        method,
        path: url.pathname,
        problems: answerProblems.map((p) => `(server) ${p}`),
      });
    }
    send(answer.status, answer.body, answer.headers);
  }

  private route(op: MatchedOperation, query: URLSearchParams, body: Json): Answer {
    const { owner, repo } = op.params;
    if (op.template.startsWith('/repos/') && (owner !== this.owner || repo !== this.repo)) return notFound();
    switch (op.operationId) {
      case 'users/get-authenticated':
        return this.opts.identity?.kind === 'user'
          ? { status: 200, body: privateUser(this.opts.identity.login) }
          : { status: 403, body: FORBIDDEN };
      case 'checks/create':
        return this.forbid.checks ? { status: 403, body: FORBIDDEN } : this.createCheckRun(body);
      case 'checks/update':
        return this.forbid.checks
          ? { status: 403, body: FORBIDDEN }
          : this.updateCheckRun(Number(op.params.check_run_id), body);
      case 'checks/get': {
        const run = this.checkRuns.find((c) => c.id === Number(op.params.check_run_id));
        return run ? { status: 200, body: checkRunJson(this.owner, this.repo, run) } : notFound();
      }
      case 'issues/list-comments':
        return this.listComments(Number(op.params.issue_number), query);
      case 'issues/create-comment':
        return this.forbid.comments
          ? { status: 403, body: FORBIDDEN }
          : this.createComment(Number(op.params.issue_number), body.body);
      case 'issues/update-comment': {
        if (this.forbid.comments) return { status: 403, body: FORBIDDEN };
        const comment = this.comments.find((c) => c.id === Number(op.params.comment_id));
        if (!comment) return notFound();
        comment.body = body.body;
        comment.updated_at = new Date().toISOString();
        return { status: 200, body: commentJson(this.owner, this.repo, comment) };
      }
      case 'pulls/list': {
        const head = query.get('head');
        const prs = (this.opts.pullRequests ?? []).filter(
          (p) => !head || head === `${p.headOwner}:${p.headBranch}`,
        );
        return { status: 200, body: prs.map((p) => pullJson(this.owner, this.repo, p)) };
      }
      default:
        // Described by GitHub but not played here: the action should not be making it.
        return {
          status: 404,
          body: {
            message: `Not Found (the loopback server does not play ${op.operationId})`,
            documentation_url: 'https://docs.github.com/rest',
          },
        };
    }
  }

  private get identity() {
    return this.opts.identity?.kind === 'user'
      ? { login: this.opts.identity.login, id: 583231, type: 'User' as const }
      : ACTIONS_BOT;
  }

  private createCheckRun(body: Json): Answer {
    // GitHub's own rules beyond the schema: a completed run needs a conclusion.
    if ((body.status === 'completed' || body.completed_at) && !body.conclusion) {
      return unprocessable('conclusion is required when status is completed');
    }
    const run: CheckRunState = {
      id: this.id(),
      name: body.name,
      head_sha: body.head_sha,
      status: body.conclusion ? 'completed' : (body.status ?? 'queued'),
      conclusion: body.conclusion ?? null,
      started_at: body.started_at ?? new Date().toISOString(),
      completed_at: body.conclusion ? (body.completed_at ?? new Date().toISOString()) : null,
      details_url: body.details_url ?? null,
      output: {
        title: body.output?.title ?? null,
        summary: body.output?.summary ?? null,
        text: body.output?.text ?? null,
      },
      annotations: [...(body.output?.annotations ?? [])],
      updates: 0,
    };
    this.checkRuns.push(run);
    return { status: 201, body: checkRunJson(this.owner, this.repo, run) };
  }

  private updateCheckRun(id: number, body: Json): Answer {
    const run = this.checkRuns.find((c) => c.id === id);
    if (!run) return notFound();
    if ((body.status === 'completed' || body.completed_at) && !body.conclusion) {
      return unprocessable('conclusion is required when status is completed');
    }
    run.updates += 1;
    if (body.conclusion) {
      run.status = 'completed';
      run.conclusion = body.conclusion;
      run.completed_at = body.completed_at ?? new Date().toISOString();
    } else if (body.status) {
      run.status = body.status;
    }
    if (body.output) {
      run.output = {
        title: body.output.title ?? run.output.title,
        summary: body.output.summary ?? run.output.summary,
        text: body.output.text ?? run.output.text,
      };
      // Each update appends its annotations to the ones the run already has.
      run.annotations.push(...(body.output.annotations ?? []));
    }
    return { status: 200, body: checkRunJson(this.owner, this.repo, run) };
  }

  private listComments(issue: number, query: URLSearchParams): Answer {
    const perPage = Math.min(100, Number(query.get('per_page') ?? 30));
    const page = Number(query.get('page') ?? 1);
    const all = this.comments.filter((c) => c.issue_number === issue);
    const slice = all.slice((page - 1) * perPage, page * perPage);
    const last = Math.max(1, Math.ceil(all.length / perPage));
    const base = `${this.url}/repos/${this.owner}/${this.repo}/issues/${issue}/comments?per_page=${perPage}`;
    const links = [];
    if (page < last)
      links.push(`<${base}&page=${page + 1}>; rel="next"`, `<${base}&page=${last}>; rel="last"`);
    if (page > 1) links.push(`<${base}&page=1>; rel="first"`, `<${base}&page=${page - 1}>; rel="prev"`);
    return {
      status: 200,
      body: slice.map((c) => commentJson(this.owner, this.repo, c)),
      headers: links.length ? { link: links.join(', ') } : {},
    };
  }

  private createComment(issue: number, text: string): Answer {
    const now = new Date().toISOString();
    const comment: CommentState = {
      id: this.id(),
      issue_number: issue,
      body: text,
      user: this.identity,
      created_at: now,
      updated_at: now,
    };
    this.comments.push(comment);
    return {
      status: 201,
      body: commentJson(this.owner, this.repo, comment),
      headers: {
        location: `https://api.github.com/repos/${this.owner}/${this.repo}/issues/comments/${comment.id}`,
      },
    };
  }
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

function notFound(): Answer {
  return {
    status: 404,
    body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' },
  };
}

function unprocessable(message: string): Answer {
  return {
    status: 422,
    body: {
      message: 'Validation Failed',
      errors: [message],
      documentation_url: 'https://docs.github.com/rest',
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts a loopback GitHub API. */
export async function startGitHubApi(opts: GitHubApiOptions = {}): Promise<GitHubApi> {
  return new GitHubApi(opts).start();
}
