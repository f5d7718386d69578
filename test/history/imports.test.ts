/**
 * One door to history (issue 26): the edges — the UI, the CLI, the HTTP server, MCP, the agent, the
 * client — ask src/history/ and never read the index the writer keeps (src/store/history-index/, its diff
 * internals included) themselves; the read model stays below the edges, and the store below the read
 * model. Checked on the import statements of every source file, type-only imports included.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/dist';

const SRC = path.join(REPO_ROOT, 'src');
const EDGES = ['web', 'cli', 'server', 'mcp', 'agent', 'client'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.m?ts$/.test(entry.name) ? [full] : [];
  });
}

/** Every module a file imports (static, type-only, re-exports, require() and import()), resolved to a path under src/ when relative. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/\b(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/g),
    ...text.matchAll(/\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]);
  return specifiers.map((s) => (s.startsWith('.') ? path.relative(SRC, path.resolve(path.dirname(file), s)).replace(/\.js$/, '') : s));
}

const FORBIDDEN_FOR_EDGES = [/^store\/history-index(\/|$)/, /^store\/history(\/|$)/];

describe('imports', () => {
  it('finds the imports it checks (the scan itself works)', () => {
    const log = importsOf(path.join(SRC, 'cli/commands/log.ts'));
    expect(log).toEqual(expect.arrayContaining(['history/log', 'history/log-filter', 'history/entry', 'commander']));
    expect(importsOf(path.join(SRC, 'history/log.ts'))).toEqual(expect.arrayContaining(['store/history-index/entry']));
  });

  it('no edge imports the history index, its internals or the commit diffs: they ask src/history/', () => {
    const offending: string[] = [];
    for (const edge of EDGES) {
      for (const file of sourceFiles(path.join(SRC, edge))) {
        for (const target of importsOf(file)) {
          if (FORBIDDEN_FOR_EDGES.some((rule) => rule.test(target))) offending.push(`${path.relative(SRC, file)} imports ${target}`);
        }
      }
    }
    expect(offending).toEqual([]);
  });

  it('the read model imports no edge, and the store (the index the writer keeps included) does not import the read model', () => {
    const offending: string[] = [];
    for (const file of sourceFiles(path.join(SRC, 'history'))) {
      for (const target of importsOf(file)) if (EDGES.some((edge) => target === edge || target.startsWith(`${edge}/`))) offending.push(`${path.relative(SRC, file)} imports ${target}`);
    }
    for (const file of sourceFiles(path.join(SRC, 'store'))) {
      for (const target of importsOf(file)) if (target === 'history' || target.startsWith('history/')) offending.push(`${path.relative(SRC, file)} imports ${target}`);
    }
    expect(offending).toEqual([]);
  });

  it('the old homes of the index are gone (one place for it: src/store/history-index/)', () => {
    expect(fs.existsSync(path.join(SRC, 'store/history-index.ts'))).toBe(false);
    expect(fs.existsSync(path.join(SRC, 'store/history'))).toBe(false);
    // The diffs of the index's entries live with it (store/history-index/file-diffs.ts).
    expect(fs.existsSync(path.join(SRC, 'store/commit-diff.ts'))).toBe(false);
  });
});
