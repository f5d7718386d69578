/**
 * `memgit import`: a memory directory written by the SDK's own BetaLocalFilesystemMemoryTool, adopted as
 * one commit per file (or one with --single), checked with the git CLI; refused names are reported and
 * skipped, and an import that cannot be done writes nothing.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { folderOthersCannotEnter, SharedPackage, sharePackage } from '../support/other-user';
import { gitReport, makeTempDir, removeDir, storeFingerprint } from './git-helpers';

const dirs: string[] = [];
const temp = (prefix: string) => {
  const dir = makeTempDir(prefix);
  dirs.push(dir);
  return dir;
};
const NOBODY = 65534;
const RUNS_AS_ROOT = process.getuid?.() === 0;
/** Under root, the package copied where `nobody` can run it (the checkout may sit in a folder only root may enter). */
let shared: SharedPackage | undefined;
const memgit = (...args: string[]) => memgitAs(undefined, ...args);
function memgitAs(uid: number | undefined, ...args: string[]) {
  const ids = uid === undefined ? {} : { uid, gid: uid };
  const cli = uid === undefined ? CLI_MAIN : shared!.cliMain;
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, USER: 'ops_ann' }, ...ids });
}
const git = (dir: string, ...args: string[]) => spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).stdout.trimEnd();

/** A memory directory as the SDK leaves it, plus files a user or another tool put there. */
async function sdkMemoryDir(): Promise<string> {
  const base = temp('memgit-sdk-');
  const tool = await BetaLocalFilesystemMemoryTool.init(base);
  await tool.create({ command: 'create', path: '/memories/notes.md', file_text: 'Dana prefers email.\n' });
  await tool.create({ command: 'create', path: '/memories/projects/atlas.md', file_text: '# Atlas\nship in Q3\n' });
  await tool.str_replace({ command: 'str_replace', path: '/memories/projects/atlas.md', old_str: 'Q3', new_str: 'Q4' });
  const root = path.join(base, 'memories');
  fs.writeFileSync(path.join(root, '.DS_Store'), 'junk');
  fs.writeFileSync(path.join(root, 'what?.md'), 'question\n');
  fs.writeFileSync(path.join(root, 'binary.md'), Buffer.from([0xff, 0xfe, 0x00]));
  fs.symlinkSync('/etc/passwd', path.join(root, 'passwd.md'));
  return base;
}

afterAll(() => {
  dirs.forEach(removeDir);
  shared?.remove();
});

/**
 * Run `task` (a memgit CLI run) as a user that file modes apply to: root reads a file of mode 000 anyway,
 * so under root the CLI runs as `nobody`, with `dirs` handed to it for the run and given back after it.
 */
function unprivileged(task: (uid?: number) => ReturnType<typeof memgit>, dirs: string[]): ReturnType<typeof memgit> {
  if (!RUNS_AS_ROOT) return task();
  const owner = (uid: number, gid: number) => {
    const walk = (p: string) => {
      fs.lchownSync(p, uid, gid);
      if (fs.lstatSync(p).isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
    };
    for (const dir of dirs) walk(dir);
  };
  owner(NOBODY, NOBODY);
  try {
    return task(NOBODY);
  } finally {
    owner(0, 0);
  }
}

beforeAll(async () => {
  await ensureBuilt();
  if (RUNS_AS_ROOT) shared = sharePackage();
});

describe('memgit import', () => {
  it('adopts the SDK’s directory as one commit per file, reporting and skipping refused names', async () => {
    const base = await sdkMemoryDir();
    const repo = path.join(temp('memgit-import-'), 'store');
    const run = memgit('import', base, '--repo', repo);
    expect(run.status).toBe(0);
    expect(run.stderr.split('\n').filter(Boolean).sort()).toEqual([
      'memgit: skipped /memories/.DS_Store: Invalid path "/memories/.DS_Store": names starting with "." are reserved',
      'memgit: skipped /memories/binary.md: not UTF-8 text',
      'memgit: skipped /memories/passwd.md: a symbolic link (only regular files are imported)',
      expect.stringMatching(/^memgit: skipped \/memories\/what\?\.md: Invalid path "\/memories\/what\?\.md": /),
    ]);
    expect(run.stdout).toMatch(/^imported \/memories\/notes\.md \(20 bytes\)  [0-9a-f]{12}\nimported \/memories\/projects\/atlas\.md \(19 bytes\)  [0-9a-f]{12}\n2 file\(s\) imported in 2 commit\(s\), 0 unchanged, 4 skipped\n$/);
    expect(git(repo, 'log', '--format=%s|%(trailers:key=Memory-Actor,valueonly,separator=)')).toBe(
      'import /memories/projects/atlas.md|operator:ops_ann\nimport /memories/notes.md|operator:ops_ann\nmemgit: initialise store|',
    );
    expect(git(repo, 'show', 'HEAD:memories/projects/atlas.md')).toBe('# Atlas\nship in Q4');
    const report = gitReport(repo);
    expect(report.fsckCode).toBe(0);
    expect(report.status).toBe('');

    // Running it again finds everything there: nothing new, nothing written.
    const before = storeFingerprint(repo);
    const again = memgit('import', path.join(base, 'memories'), '--repo', repo, '--json');
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ imported: [], unchanged: ['/memories/notes.md', '/memories/projects/atlas.md'], commits: [] });
    expect(storeFingerprint(repo)).toBe(before);
  });

  it('--single makes one commit; a conflict with the store refuses everything', async () => {
    const base = await sdkMemoryDir();
    const repo = path.join(temp('memgit-import-'), 'store');
    const single = memgit('import', base, '--repo', repo, '--single', '--json');
    expect(single.status).toBe(0);
    const report = JSON.parse(single.stdout);
    expect(report.commits).toHaveLength(1);
    expect(git(repo, 'log', '-1', '--format=%s')).toBe('import 2 files');
    expect(git(repo, 'ls-tree', '-r', '--name-only', 'HEAD', 'memories/')).toBe('memories/notes.md\nmemories/projects/atlas.md');

    // The SDK's copy moves on; the store's differs now: importing again would overwrite it.
    fs.writeFileSync(path.join(base, 'memories', 'new.md'), 'new\n');
    fs.writeFileSync(path.join(base, 'memories', 'notes.md'), 'changed\n');
    const before = storeFingerprint(repo);
    const refused = memgit('import', base, '--repo', repo);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('memgit: /memories/notes.md is already in the store with other content; nothing was imported\n');
    expect(storeFingerprint(repo)).toBe(before);
  });

  it('a file that cannot be read is found before anything is written: HEAD, log and fsck unchanged', async () => {
    const base = await sdkMemoryDir();
    const repo = path.join(temp('memgit-import-'), 'store');
    expect(memgit('import', base, '--repo', repo, '--single').status).toBe(0); // a store with history
    // More to import, the last of which (in path order) cannot be read: one commit per file would have
    // written the others first.
    fs.writeFileSync(path.join(base, 'memories', 'a-first.md'), 'first\n');
    fs.writeFileSync(path.join(base, 'memories', 'b-second.md'), 'second\n');
    fs.writeFileSync(path.join(base, 'memories', 'zz-locked.md'), 'locked\n');
    fs.chmodSync(path.join(base, 'memories', 'zz-locked.md'), 0o000);
    const headBefore = git(repo, 'rev-parse', 'HEAD');
    const logBefore = git(repo, 'log', '--format=%H %s');
    const before = storeFingerprint(repo);

    const run = unprivileged((uid) => memgitAs(uid, 'import', base, '--repo', repo), [base, path.dirname(repo)]);
    expect(run.stderr).toContain('memgit: cannot read /memories/zz-locked.md (EACCES); nothing was imported\n');
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(headBefore);
    expect(git(repo, 'log', '--format=%H %s')).toBe(logBefore);
    expect(storeFingerprint(repo)).toBe(before);
    const report = gitReport(repo);
    expect(report.fsckOutput).toBe('');
    expect(report.fsckCode).toBe(0);
    expect(report.status).toBe('');
  });

  it('under root, nobody runs a copy of the package outside the checkout, in folders everyone may enter', () => {
    if (!RUNS_AS_ROOT) {
      expect(shared).toBeUndefined(); // the CLI runs as this user, from the checkout
      return;
    }
    const copy = path.dirname(shared!.cliMain);
    expect(path.relative(REPO_ROOT, copy).startsWith('..')).toBe(true);
    expect(folderOthersCannotEnter(copy)).toBeNull();
    // And nobody can start it: --version loads the CLI and its dependencies.
    const run = memgitAs(NOBODY, '--version');
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`${JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version}\n`);
    expect(run.status).toBe(0);
  });

  it('refuses a folder with no memories/ and changes nothing', () => {
    const empty = temp('memgit-import-empty-');
    const repo = path.join(temp('memgit-import-'), 'store');
    const run = memgit('import', empty, '--repo', repo, '--dry-run');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/holds no memories\/ folder/);
  });
});
