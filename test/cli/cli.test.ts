/**
 * The memgit CLI as users and scripts run it: the built program spawned as a process.
 */
import { spawn, spawnSync, SpawnSyncReturns } from 'node:child_process';
import { runCommand } from '../../src/contract';
import { runAndApply, treeFrom, contractOptions } from '../contract/harness';
import { ExpectedCommit, expectedMessage, expectRepository, gitReport, headFiles, loadVectors, makeTempDir, MUTATING_COMMANDS, normalisedPath, removeDir, Vector } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';

const vectors = loadVectors();
const dirs: string[] = [];

function tempRepo(): string {
  const dir = makeTempDir('memgit-cli-');
  dirs.push(dir);
  return dir;
}

/** The environment of a user without MEMGIT_REPO set. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.MEMGIT_REPO;
  return env;
}

function memgit(args: string[], input = '', env = cleanEnv()): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [CLI_MAIN, ...args], { input, encoding: 'utf8', env, cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 });
}

function toolUseLine(id: string, input: unknown): string {
  return JSON.stringify({ type: 'tool_use', id, name: 'memory', input });
}

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(() => dirs.forEach(removeDir));

/** The commit a successful mutating call makes (spec §5). */
function commitFor(id: string, input: Record<string, unknown>, session: string): ExpectedCommit {
  return input.command === 'rename'
    ? { id, session, command: 'rename', path: normalisedPath(String(input.old_path)), newPath: normalisedPath(String(input.new_path)) }
    : { id, session, command: String(input.command), path: normalisedPath(String(input.path)) };
}

/** One line of an exec stream and what must come back for it. */
interface StreamLine {
  line: string;
  check: (output: unknown) => void;
}

/**
 * Every vector in one long stream against one store: its setup, its input, then deletes that bring the
 * memory back to empty (computed with the in-memory model), so the next vector starts from a fresh
 * memory. Malformed lines are mixed in; each gets an error line and the stream goes on.
 */
async function vectorStream(selected: Vector[], session: string): Promise<{ lines: StreamLine[]; commits: ExpectedCommit[] }> {
  const lines: StreamLine[] = [];
  const commits: ExpectedCommit[] = [];
  const succeeds = (id: string, input: Record<string, unknown>, text?: string) => {
    lines.push({
      line: toolUseLine(id, input),
      check: (output) =>
        expect({ input, output }).toEqual({ input, output: { type: 'tool_result', tool_use_id: id, content: text ?? expect.any(String) } }),
    });
    if (MUTATING_COMMANDS.has(String(input.command))) commits.push(commitFor(id, input, session));
  };
  const malformed: Array<[string, (error: string) => void]> = [
    ['{"type":"tool_use","id":"toolu_x","name":"memory","input":', (e) => expect(e).toMatch(/^invalid JSON: /)],
    ['', (e) => expect(e).toMatch(/^invalid JSON: /)],
    ['[1,2]', (e) => expect(e).toBe('expected a JSON object')],
    ['"tool_use"', (e) => expect(e).toBe('expected a JSON object')],
    ['{"type":"text","text":"hi"}', (e) => expect(e).toBe('expected "type":"tool_use", got "text"')],
    ['{"id":"toolu_y","name":"memory","input":{}}', (e) => expect(e).toBe('expected "type":"tool_use", got nothing')],
    [toolUseLine('toolu_z', { command: 'view', path: '/memories' }).replace('"memory"', '"bash"'), (e) => expect(e).toBe('expected the memory tool ("name":"memory"), got "bash"')],
  ];
  for (const [index, vector] of selected.entries()) {
    const options = contractOptions(vector.options);
    for (const [step, command] of vector.setup.entries()) succeeds(`toolu_v${index}_setup${step}`, command);
    const inputId = `toolu_v${index}_input`;
    lines.push({
      line: toolUseLine(inputId, vector.input),
      check: (output) =>
        expect({ vector: vector.name, output }).toEqual({
          vector: vector.name,
          output: vector.expect.is_error
            ? { type: 'tool_result', tool_use_id: inputId, content: vector.expect.text, is_error: true }
            : { type: 'tool_result', tool_use_id: inputId, content: vector.expect.text },
        }),
    });
    if (!vector.expect.is_error && MUTATING_COMMANDS.has(String(vector.input.command))) {
      commits.push(commitFor(inputId, vector.input, session));
    }
    const model = await treeFrom(vector.setup, options);
    await runAndApply(model, vector.input, options);
    for (const item of model.items().filter((i) => !i.path.includes('/'))) {
      const path = `/memories/${item.path}`;
      succeeds(`toolu_v${index}_cleanup_${lines.length}`, { command: 'delete', path }, `Successfully deleted ${path}`);
    }
    if (index % 15 === 0) {
      const [line, check] = malformed[(index / 15) % malformed.length];
      lines.push({
        line,
        check: (output) => {
          expect(Object.keys(output as object).sort()).toEqual(['error', 'type']);
          expect((output as { type: string }).type).toBe('error');
          check((output as { error: string }).error);
        },
      });
    }
  }
  // The memory really is empty again after each vector's cleanup.
  const emptyView = await runCommand({ command: 'view', path: '/memories' }, await treeFrom([]), contractOptions());
  lines.push({
    line: toolUseLine('toolu_final_view', { command: 'view', path: '/memories' }),
    check: (output) => expect(output).toEqual({ type: 'tool_result', tool_use_id: 'toolu_final_view', content: emptyView.text }),
  });
  return { lines, commits };
}

function runStream(repo: string, args: string[], stream: StreamLine[]): void {
  const run = memgit(['exec', '--repo', repo, ...args], stream.map((s) => s.line).join('\n') + '\n');
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const outputs = run.stdout.split('\n');
  expect(outputs.pop()).toBe('');
  expect(outputs).toHaveLength(stream.length);
  stream.forEach((s, index) => s.check(JSON.parse(outputs[index])));
}

describe('memgit exec', () => {
  it('answers every vector, line by line, in one long stream', async () => {
    const selected = vectors.filter((v) => v.options === undefined);
    expect(selected.length).toBeGreaterThan(100);
    const repo = tempRepo();
    const { lines, commits } = await vectorStream(selected, 'sess_cli_vectors');
    runStream(repo, ['--session', 'sess_cli_vectors'], lines);
    expectRepository(gitReport(repo), commits);
  });

  it('answers the strict-create vectors with --create-mode error', async () => {
    const selected = vectors.filter((v) => v.options?.createMode === 'error');
    expect(selected.length).toBeGreaterThan(0);
    const repo = tempRepo();
    const { lines, commits } = await vectorStream(selected, 'sess_cli_strict');
    runStream(repo, ['--session', 'sess_cli_strict', '--create-mode', 'error'], lines);
    expectRepository(gitReport(repo), commits);
  });

  it('overwrites by default and refuses with --create-mode error', () => {
    const repo = tempRepo();
    const create = (id: string, text: string) => toolUseLine(id, { command: 'create', path: '/memories/a.md', file_text: text });
    const overwrite = memgit(['exec', '--repo', repo, '--session', 's1'], `${create('t1', 'one')}\n${create('t2', 'two')}\n`);
    expect(overwrite.stdout.trim().split('\n').map((l) => JSON.parse(l).content)).toEqual([
      'File created successfully at: /memories/a.md',
      'File created successfully at: /memories/a.md',
    ]);
    const strict = memgit(['exec', '--repo', repo, '--session', 's1', '--create-mode', 'error'], `${create('t3', 'three')}\n`);
    expect(JSON.parse(strict.stdout)).toEqual({
      type: 'tool_result',
      tool_use_id: 't3',
      content: 'Error: File /memories/a.md already exists',
      is_error: true,
    });
    const bogus = memgit(['exec', '--repo', repo, '--create-mode', 'strict'], '');
    expect(bogus.status).not.toBe(0);
    expect(bogus.stderr).toContain("argument 'strict' is invalid. Allowed choices are overwrite, error.");
  });

  it('makes up a session id when none is given, and refuses an invalid one', () => {
    const repo = tempRepo();
    const run = memgit(['exec', '--repo', repo], `${toolUseLine('t1', { command: 'create', path: '/memories/s.md', file_text: '' })}\n`);
    expect(run.status).toBe(0);
    const session = /^memgit: session (sess_\d{8}T\d{6}_[a-z0-9]{4})\n$/.exec(run.stderr)?.[1];
    expect(session).toBeDefined();
    expectRepository(gitReport(repo), [{ id: 't1', command: 'create', path: '/memories/s.md', session: session! }]);

    const invalid = memgit(['exec', '--repo', repo, '--session', 'two words'], '');
    expect(invalid.status).toBe(64); // a usage error
    expect(invalid.stderr).toBe('memgit: invalid --session "two words": use 1-128 of A-Z a-z 0-9 _ . : -\n');
  });

  it('serialises several exec processes writing to one store at once', async () => {
    const repo = tempRepo();
    const init = memgit(['exec', '--repo', repo, '--session', 'sess_init'], `${toolUseLine('toolu_init', { command: 'create', path: '/memories/shared.md', file_text: 'start' })}\n`);
    expect(init.status).toBe(0);
    const writers = ['sess_w1', 'sess_w2', 'sess_w3'];
    const perWriter = 15;
    const runs = await Promise.all(
      writers.map(
        (session) =>
          new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
            const child = spawn(process.execPath, [CLI_MAIN, 'exec', '--repo', repo, '--session', session], { env: cleanEnv() });
            let stdout = '';
            let stderr = '';
            child.stdout.on('data', (chunk) => (stdout += chunk));
            child.stderr.on('data', (chunk) => (stderr += chunk));
            child.on('close', (code) => resolve({ code, stdout, stderr }));
            const lines: string[] = [];
            for (let i = 0; i < perWriter; i++) {
              // Every writer edits the same file (each insert reads the latest HEAD) and creates its own.
              lines.push(toolUseLine(`toolu_${session}_${i}_a`, { command: 'insert', path: '/memories/shared.md', insert_line: 1, insert_text: `${session} ${i}` }));
              lines.push(toolUseLine(`toolu_${session}_${i}_b`, { command: 'create', path: `/memories/${session}/${i}.md`, file_text: `${i}` }));
            }
            child.stdin.end(lines.join('\n') + '\n');
          }),
      ),
    );
    const commits: ExpectedCommit[] = [{ id: 'toolu_init', command: 'create', path: '/memories/shared.md', session: 'sess_init' }];
    for (const [index, run] of runs.entries()) {
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const outputs = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
      expect(outputs).toHaveLength(2 * perWriter);
      expect(outputs.filter((o) => o.is_error)).toEqual([]);
      for (const output of outputs) {
        const [, session, i, kind] = /^toolu_(sess_w\d)_(\d+)_([ab])$/.exec(output.tool_use_id)!;
        expect(session).toBe(writers[index]);
        commits.push({ id: output.tool_use_id, session, command: kind === 'a' ? 'insert' : 'create', path: kind === 'a' ? '/memories/shared.md' : `/memories/${session}/${i}.md` });
      }
    }
    const report = gitReport(repo);
    expect(report.commits).toHaveLength(1 + 1 + writers.length * 2 * perWriter);
    // Interleaved across processes, so compare as sets; each process's own calls stay in order.
    const sortByMessage = (messages: string[]) => [...messages].sort();
    expect(sortByMessage(report.commits.slice(1).map((c) => c.message))).toEqual(sortByMessage(commits.map(expectedMessage)));
    for (const session of writers) {
      const own = report.commits.map((c) => c.message.split('\n')[0]).filter((title) => title.startsWith(`toolu_${session}_`));
      expect(own).toEqual(commits.filter((c) => c.session === session).map((c) => c.id));
    }
    expect(report).toMatchObject({ fsckOutput: '', fsckCode: 0, status: '' });
    const shared = headFiles(repo).get('memories/shared.md')!.toString('utf8').split('\n');
    expect(shared[0]).toBe('start');
    expect(shared).toHaveLength(1 + writers.length * perWriter);
    expect(new Set(shared).size).toBe(shared.length);
  });

  it('uses $MEMGIT_REPO when --repo is not given', () => {
    const repo = tempRepo();
    const run = memgit(['exec', '--session', 's'], `${toolUseLine('t1', { command: 'create', path: '/memories/env.md', file_text: 'e' })}\n`, {
      ...cleanEnv(),
      MEMGIT_REPO: repo,
    });
    expect(run.status).toBe(0);
    expectRepository(gitReport(repo), [{ id: 't1', command: 'create', path: '/memories/env.md', session: 's' }]);
  });
});

describe('memgit log and show', () => {
  let repo: string;
  /** Full commit ids, newest first, from the git CLI. */
  let commitIds: string[];

  beforeAll(() => {
    repo = tempRepo();
    const first = [
      toolUseLine('toolu_s1_1', { command: 'create', path: '/memories/a.md', file_text: 'one\nkeep\n' }),
      toolUseLine('toolu_s1_2', { command: 'create', path: '/memories/dir/b.md', file_text: 'b' }),
    ];
    const second = [
      toolUseLine('toolu_s2_1', { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' }),
      toolUseLine('toolu_s2_2', { command: 'rename', old_path: '/memories/dir', new_path: '/memories/dir2' }),
      toolUseLine('toolu_s2_3', { command: 'view', path: '/memories' }),
    ];
    expect(memgit(['exec', '--repo', repo, '--session', 'sess_one'], first.join('\n') + '\n').status).toBe(0);
    expect(memgit(['exec', '--repo', repo, '--session', 'sess_two'], second.join('\n') + '\n').status).toBe(0);
    commitIds = spawnSync('git', ['-C', repo, 'rev-list', 'HEAD'], { encoding: 'utf8' }).stdout.trim().split('\n');
    expect(commitIds).toHaveLength(5);
  });

  const logJson = (...args: string[]) => {
    const run = memgit(['log', '--repo', repo, '--json', ...args]);
    expect(run.status).toBe(0);
    return run.stdout.trim() ? run.stdout.trim().split('\n').map((line) => JSON.parse(line)) : [];
  };

  it('--json prints one object per commit, newest first, with every field', () => {
    const entries = logJson();
    expect(entries.map((e) => e.commit)).toEqual(commitIds);
    expect(entries.map((e) => [e.toolUseId, e.session, e.command, e.path, e.newPath, e.paths])).toEqual([
      ['toolu_s2_2', 'sess_two', 'rename', '/memories/dir', '/memories/dir2', ['/memories/dir/b.md', '/memories/dir2/b.md']],
      ['toolu_s2_1', 'sess_two', 'str_replace', '/memories/a.md', null, ['/memories/a.md']],
      ['toolu_s1_2', 'sess_one', 'create', '/memories/dir/b.md', null, ['/memories/dir/b.md']],
      ['toolu_s1_1', 'sess_one', 'create', '/memories/a.md', null, ['/memories/a.md']],
      [null, null, null, null, null, []],
    ]);
    expect(entries.map((e) => e.parent)).toEqual([...commitIds.slice(1), null]);
    expect(entries[4].title).toBe('memgit: initialise store');
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(
        ['actor', 'command', 'commit', 'key', 'newPath', 'parent', 'path', 'paths', 'reason', 'revertedBy', 'reverts', 'review', 'schema', 'session', 'time', 'title', 'toolUseId'],
      );
      expect(entry.schema).toBe('memgit.commit/1');
      expect(new Date(entry.time).toISOString()).toBe(entry.time);
      expect(Math.abs(Date.now() - Date.parse(entry.time))).toBeLessThan(10 * 60 * 1000);
    }
  });

  it('filters by --session and --path, and limits with -n', () => {
    expect(logJson('--session', 'sess_one').map((e) => e.toolUseId)).toEqual(['toolu_s1_2', 'toolu_s1_1']);
    expect(logJson('--path', '/memories/dir').map((e) => e.toolUseId)).toEqual(['toolu_s2_2', 'toolu_s1_2']);
    expect(logJson('--path', '/memories/dir2/b.md').map((e) => e.toolUseId)).toEqual(['toolu_s2_2']);
    expect(logJson('--path', '/memories/a.md', '--session', 'sess_two').map((e) => e.toolUseId)).toEqual(['toolu_s2_1']);
    expect(logJson('-n', '2').map((e) => e.toolUseId)).toEqual(['toolu_s2_2', 'toolu_s2_1']);
  });

  it('prints one text line per commit, newest first', () => {
    const run = memgit(['log', '--repo', repo]);
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(5);
    const time = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ';
    expect(lines[0]).toMatch(new RegExp(`^${commitIds[0].slice(0, 12)}  ${time}  sess_two  rename /memories/dir -> /memories/dir2  toolu_s2_2$`));
    expect(lines[1]).toMatch(new RegExp(`^${commitIds[1].slice(0, 12)}  ${time}  sess_two  str_replace /memories/a.md  toolu_s2_1$`));
    expect(lines[3]).toMatch(new RegExp(`^${commitIds[3].slice(0, 12)}  ${time}  sess_one  create /memories/a.md  toolu_s1_1$`));
    expect(lines[4]).toMatch(new RegExp(`^${commitIds[4].slice(0, 12)}  ${time}  -  \\(store\\)  memgit: initialise store$`));
    const none = memgit(['log', '--repo', repo, '--session', 'sess_one', '--command', 'delete']);
    expect(none.status).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toBe('memgit: no commits match\n');
    const nobody = memgit(['log', '--repo', repo, '--session', 'nobody']);
    expect(nobody.status).toBe(1);
    expect(nobody.stderr).toBe('memgit: no session "nobody" in this store (memgit sessions lists them)\n');
  });

  it('shows a commit by tool_use id: metadata and unified diff', () => {
    const run = memgit(['show', 'toolu_s2_1', '--repo', repo]);
    expect(run.status).toBe(0);
    const [meta, diff] = run.stdout.split('\n\n');
    expect(meta.split('\n')).toEqual([
      `commit ${commitIds[1]}`,
      `parent ${commitIds[2]}`,
      expect.stringMatching(/^date {4}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
      'tool_use toolu_s2_1',
      'session sess_two',
      'command str_replace',
      'path    /memories/a.md',
    ]);
    expect(diff).toBe('--- a/memories/a.md\n+++ b/memories/a.md\n@@ -1,2 +1,2 @@\n-one\n+two\n keep\n');
  });

  it('shows a commit by abbreviated commit id, the same as by tool_use id', () => {
    const byId = memgit(['show', 'toolu_s2_2', '--repo', repo]);
    const byCommit = memgit(['show', commitIds[0].slice(0, 7), '--repo', repo]);
    expect(byCommit.status).toBe(0);
    expect(byCommit.stdout).toBe(byId.stdout);
    expect(byCommit.stdout).toContain('new path /memories/dir2');
    expect(byCommit.stdout).toContain('--- a/memories/dir/b.md\n+++ b/memories/dir2/b.md');
    const json = JSON.parse(memgit(['show', commitIds[0].toUpperCase(), '--repo', repo, '--json']).stdout);
    expect(json).toMatchObject({ schema: 'memgit.commit/1', commit: commitIds[0], parent: commitIds[1], toolUseId: 'toolu_s2_2', command: 'rename' });
    expect(json.files).toEqual([
      { status: 'renamed', oldPath: '/memories/dir/b.md', newPath: '/memories/dir2/b.md', patch: expect.stringContaining('--- a/memories/dir/b.md\n+++ b/memories/dir2/b.md') },
    ]);
  });

  // toolu_s2_3 was a view: no commit, but on the record (the call log), unlike a typo.
  it('shows a view from the call log, not as an unknown ref', () => {
    const run = memgit(['show', '--repo', repo, 'toolu_s2_3']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^call {4}toolu_s2_3 \(read: no commit\)\nsession sess_two\n/);
    expect(run.stdout).toContain('\nresult  ok\n');
  });

  // Git ref names are never resolved (agent-controlled strings must not reach git as refs).
  it.each(['nope', 'ffff', 'deadbeef', 'main'])('refuses an unknown ref %s with a clear error', (ref) => {
    const run = memgit(['show', '--repo', repo, ref]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^memgit: no commit or tool_use id ".+" in this store\n$/);
  });
});

describe('help', () => {
  it.each([
    [[], ['exec', 'log', 'show', '--repo', 'MEMGIT_REPO']],
    [['exec'], ['--repo', '--session', '--create-mode', 'overwrite', 'error', 'tool_use', 'stdin']],
    [['log'], ['--repo', '--session', '--path', '--json', '--max-count']],
    [['show'], ['--repo', '--json', 'tool_use id', 'commit id']],
  ])('memgit %j --help explains the command', (command, mentions) => {
    const run = memgit([...command, '--help']);
    expect(run.status).toBe(0);
    for (const mention of mentions) expect(run.stdout).toContain(mention);
  });

  it('runs as `npx memgit` from the repository root', () => {
    // Offline: the package must come from this checkout, never from the registry.
    const run = spawnSync('npx', ['memgit', '--help'], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...cleanEnv(), npm_config_offline: 'true' } });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: memgit');
  });
});
