/**
 * The floors of src/ (docs/code-map.md), checked on the import statements of every source file, type-only
 * imports, re-exports, require() and import() included:
 *
 * - the edges — src/web, src/server, src/mcp, src/agent, src/cli, src/client — never import each other,
 *   nor the composition above them: what two edges share lives below both;
 * - the floors below the edges import no edge and not the composition;
 * - the composition (src/compose) is the top floor: it may import every floor and every edge, never the
 *   package's face (src/index.ts);
 * - src/index.ts, the package's face, re-exports from the floors, the edges and the composition (the list
 *   below), and nothing imports it.
 *
 * One file is named as the exception it is: src/cli/main.ts, the `memgit` executable, whose path is
 * published (package.json's bin, users' MCP configs and service units), belongs to the composition.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './support/dist';

const SRC = path.join(REPO_ROOT, 'src');
const EDGES = ['web', 'server', 'mcp', 'agent', 'cli', 'client'];
const BELOW_EDGES = ['contract', 'detect', 'store', 'history', 'tenancy', 'operator', 'terminal', 'dream'];
const TOP = 'compose';
/** The bin: in src/cli for its published path, the composition's by what it does. */
const ENTRY = 'cli/main.ts';
/** What the package's face re-exports from. */
const INDEX_MAY_IMPORT = ['contract', 'store', 'history', 'tenancy', 'dream', 'client', 'server', 'web', 'mcp', 'agent', 'compose'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.m?ts$/.test(entry.name) ? [full] : [];
  });
}

/** The modules a file imports, relative ones as paths under src/ (`web/routes/operator`). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/\b(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/g),
    ...text.matchAll(/\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => path.relative(SRC, path.resolve(path.dirname(file), s)).replace(/\.m?js$/, ''));
}

/** The floor (top folder under src/) a file or module path is in; `index` for the package's face. */
function floorOf(relative: string): string {
  const [first] = relative.split(path.sep);
  return /^index(\.m?ts)?$/.test(first) ? 'index' : first;
}

const files = sourceFiles(SRC).map((file) => ({ file, rel: path.relative(SRC, file), imports: importsOf(file) }));

function offending(filter: (from: string, to: string, rel: string) => boolean): string[] {
  return files.flatMap(({ rel, imports }) => imports.filter((target) => filter(floorOf(rel), floorOf(target), rel)).map((target) => `${rel} imports ${target}`));
}

it('finds the imports it checks (the scan itself works)', () => {
  const program = files.find((f) => f.rel === path.join('cli', 'program.ts'))!;
  expect(program.imports).toEqual(expect.arrayContaining(['store', 'cli/commands', 'cli/services']));
  const entry = files.find((f) => f.rel === ENTRY)!;
  expect(entry.imports).toEqual(['cli/threadpool', 'cli/serving-heap', 'compose/cli']);
  const compose = files.find((f) => f.rel === path.join('compose', 'cli.ts'))!;
  // require() of another module counts as much as a static import.
  expect(compose.imports).toEqual(expect.arrayContaining(['web/server', 'mcp/stdio', 'agent/demo/build']));
  expect(files.length).toBeGreaterThan(100);
  expect(new Set(files.map((f) => floorOf(f.rel)))).toEqual(new Set([...EDGES, ...BELOW_EDGES, TOP, 'index']));
});

it('no edge imports another edge or the composition (what two edges share lives below both)', () => {
  expect(offending((from, to, rel) => EDGES.includes(from) && rel !== ENTRY && to !== from && (EDGES.includes(to) || to === TOP || to === 'index'))).toEqual([]);
});

it('the bin is the one file of an edge that imports the composition, and only it', () => {
  const entry = files.find((f) => f.rel === ENTRY)!;
  expect(entry.imports.filter((target) => floorOf(target) !== 'cli')).toEqual(['compose/cli']);
});

it('the floors below the edges import no edge and not the composition', () => {
  expect(offending((from, to) => BELOW_EDGES.includes(from) && (EDGES.includes(to) || to === TOP || to === 'index'))).toEqual([]);
});

it('the composition imports every floor it needs but never the package face; the face imports only what it re-exports', () => {
  expect(offending((from, to) => from === TOP && to === 'index')).toEqual([]);
  expect(offending((from, to, rel) => from === 'index' && /^index\.ts$/.test(rel) && !INDEX_MAY_IMPORT.includes(to))).toEqual([]);
  // index.mts is the ES module entry over index.ts.
  expect(files.find((f) => f.rel === 'index.mts')!.imports.every((target) => floorOf(target) === 'index' || INDEX_MAY_IMPORT.includes(floorOf(target)))).toBe(true);
});
