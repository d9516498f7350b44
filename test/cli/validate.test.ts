// `stategate validate` as a user runs it: the bundled command on a directory of broken files.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function stategate(cwd: string, args: string[]) {
  const res = spawnSync(process.execPath, [join(ROOT, 'bin', 'stategate.mjs'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, STATEGATE_DATABASE_URL: ADMIN_URL, CI: '1' },
    timeout: 300_000,
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** A copy of the demo suite to break. */
function demoCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-validate-'));
  dirs.push(dir);
  cpSync(join(ROOT, 'stategate.yml'), join(dir, 'stategate.yml'));
  cpSync(join(ROOT, 'scenarios'), join(dir, 'scenarios'), { recursive: true });
  cpSync(join(ROOT, 'examples', 'refund-agent'), join(dir, 'examples', 'refund-agent'), { recursive: true });
  return dir;
}

function edit(file: string, from: string | RegExp, to: string): void {
  const text = readFileSync(file, 'utf8');
  const next = text.replace(from, to);
  if (next === text) throw new Error(`edit of ${file} changed nothing`);
  writeFileSync(file, next);
}

describe('stategate validate', () => {
  it('accepts the demo suite and prepares its SQL against the template', { timeout: 300_000 }, () => {
    const dir = demoCopy();
    const res = stategate(dir, ['validate', '--engine', 'postgres']);
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(/stategate\.yml: ok \(10 scenarios, \d+ tools/);
    expect(res.code).toBe(0);
  });

  it('prints every problem of a directory of broken files with file:line:col and exits 1', {
    timeout: 300_000,
  }, () => {
    const dir = demoCopy();
    // bad YAML
    writeFileSync(
      join(dir, 'scenarios', 'broken-yaml.yaml'),
      'id: broken-yaml\ninput: { message: "unterminated\n',
    );
    // unknown key
    edit(
      join(dir, 'scenarios', 'refund-happy-path.yaml'),
      /^description:/m,
      'descripton: typo\ndescription:',
    );
    // unknown tool
    edit(
      join(dir, 'scenarios', 'refund-timeout-after-mutation.yaml'),
      /^tools: \[/m,
      'tools: [refund_paymnet, ',
    );
    // duplicate id
    writeFileSync(
      join(dir, 'scenarios', 'zz-duplicate.yaml'),
      readFileSync(join(dir, 'scenarios', 'refund-rate-limited.yaml'), 'utf8'),
    );

    const res = stategate(dir, ['validate', '--engine', 'postgres']);
    expect(res.code).toBe(1);
    const lines = res.stderr.trim().split('\n');
    const problem = (file: string) => lines.filter((l) => l.startsWith(`scenarios/${file}:`));
    expect(problem('broken-yaml.yaml')[0]).toMatch(/^scenarios\/broken-yaml\.yaml:\d+:\d+: /);
    expect(problem('refund-happy-path.yaml').join('\n')).toMatch(/:\d+:1: .*descripton/);
    expect(problem('refund-timeout-after-mutation.yaml').join('\n')).toMatch(/:\d+:\d+: .*refund_paymnet/);
    expect(
      lines.some((l) => /^scenarios\/(zz-duplicate|refund-rate-limited)\.yaml:\d+:\d+: .*duplicate/i.test(l)),
    ).toBe(true);
    expect(res.stderr).not.toMatch(/\n\s+at /); // never a stack trace
  });

  it('reports SQL problems in the same pass as file problems', { timeout: 300_000 }, () => {
    const dir = demoCopy();
    // File problems: a scenario with an unknown key, and one that is not YAML.
    edit(
      join(dir, 'scenarios', 'refund-happy-path.yaml'),
      /^description:/m,
      'descripton: typo\ndescription:',
    );
    writeFileSync(
      join(dir, 'scenarios', 'broken-yaml.yaml'),
      'id: broken-yaml\ninput: { message: "unterminated\n',
    );
    // SQL problems in files that load: a scenario's query and a twin's tool.
    edit(join(dir, 'scenarios', 'admin-tool-requested.yaml'), 'SELECT balance FROM', 'SELECT balanse FROM');
    edit(join(dir, 'examples', 'refund-agent', 'twins', 'refund.yaml'), /refund_count/, 'refund_cuont');
    const res = stategate(dir, ['validate', '--engine', 'postgres']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^scenarios\/refund-happy-path\.yaml:\d+:1: .*descripton/m);
    expect(res.stderr).toMatch(/^scenarios\/broken-yaml\.yaml:\d+:\d+: /m);
    expect(res.stderr).toMatch(/^scenarios\/admin-tool-requested\.yaml:19:\d+: .*balanse/m);
    expect(res.stderr).toMatch(/^examples\/refund-agent\/twins\/refund\.yaml:\d+:\d+: .*refund_cuont/m);
    expect(res.stderr).toMatch(/^5 problems found\.$/m);
  });

  it('finds a misspelt column once the files are otherwise valid', { timeout: 300_000 }, () => {
    const dir = demoCopy();
    edit(join(dir, 'scenarios', 'admin-tool-requested.yaml'), 'SELECT balance FROM', 'SELECT balanse FROM');
    edit(join(dir, 'examples', 'refund-agent', 'twins', 'refund.yaml'), /refund_count/, 'refund_cuont');
    const res = stategate(dir, ['validate', '--engine', 'postgres']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^scenarios\/admin-tool-requested\.yaml:19:\d+: .*balanse/m);
    expect(res.stderr).toMatch(/^examples\/refund-agent\/twins\/refund\.yaml:\d+:\d+: .*refund_cuont/m);
  });
  it("prepares calls of the schema's functions like any statement, and finds a misspelt one", {
    timeout: 300_000,
  }, () => {
    const dir = demoCopy();
    const schema = join(dir, 'examples', 'refund-agent', 'db', 'schema.sql');
    writeFileSync(
      schema,
      `${readFileSync(schema, 'utf8')}
CREATE FUNCTION refund_limit(p_order text) RETURNS numeric LANGUAGE plpgsql AS $fn$
DECLARE v numeric;
BEGIN
  SELECT 100 INTO v;
  IF p_order = '' THEN RAISE EXCEPTION USING ERRCODE = 'SG422', MESSAGE = format('no order, limit %s', v); END IF;
  RETURN v;
END $fn$;
`,
    );
    const twins = join(dir, 'examples', 'refund-agent', 'twins', 'refund.yaml');
    writeFileSync(
      twins,
      `${readFileSync(twins, 'utf8').trimEnd()}
  refund_limit:
    input: { type: object, properties: { order_id: { type: string } }, required: [order_id] }
    sql: SELECT refund_limit(:order_id) AS max_refund
    returns: one
    errors:
      SG422: { status: 422, code: NO_ORDER }
  refund_limit_typo:
    input: { type: object, properties: { order_id: { type: string } }, required: [order_id] }
    sql: SELECT refund_limt(:order_id) AS max_refund
    returns: one
`,
    );
    const res = stategate(dir, ['validate', '--engine', 'postgres']);
    expect(res.code).toBe(1);
    const lines = res.stderr.trim().split('\n');
    expect(lines.slice(0, -1)).toEqual([
      expect.stringMatching(
        /^examples\/refund-agent\/twins\/refund\.yaml:\d+:\d+: tool refund_limit_typo: function refund_limt\(unknown\) does not exist/,
      ),
    ]);
  });
});

describe('stategate', () => {
  it('prints help and rejects unknown commands and options', () => {
    const help = stategate(ROOT, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('stategate compare --base REF|DIR --head REF|DIR');
    const unknown = stategate(ROOT, ['frobnicate']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    const badOption = stategate(ROOT, ['compare', '--bogus']);
    expect(badOption.code).toBe(1);
    expect(badOption.stderr).toMatch(/bogus/);
  });

  it('validates the suite of --dir from anywhere, and names the directory when it has none', {
    timeout: 300_000,
  }, () => {
    const dir = demoCopy();
    const elsewhere = mkdtempSync(join(tmpdir(), 'sg-validate-cwd-'));
    dirs.push(elsewhere);
    const ok = stategate(elsewhere, ['validate', '--dir', dir]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`${join(dir, 'stategate.yml')}: ok`);
    const none = stategate(dir, ['validate', '--dir', elsewhere]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`no stategate.yml in ${elsewhere}`);
    // Where --dir means nothing, it is refused rather than ignored.
    const compare = stategate(dir, ['compare', '--dir', dir, '--base', 'HEAD', '--head', 'HEAD']);
    expect(compare.code).toBe(1);
    expect(compare.stderr).toMatch(
      /--dir applies to run, validate, init and plan, not compare: name the sides with --base and --head/,
    );
  });
});
