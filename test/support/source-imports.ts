/**
 * The import graph of src/, read from the source text: every module a file names in an import or export
 * statement (type-only ones included), a require() or an import(), with relative specifiers resolved to
 * the file they load. For the tests that keep the floors apart (test/store/front-door.test.ts) and the
 * graph free of circles (test/circles.test.ts). A regular expression over the statements suffices: the
 * sources are ours, and the test of each checker asserts that it finds the imports it checks.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './dist';

export const SRC = path.join(REPO_ROOT, 'src');

/** Every .ts and .mts file under `dir`, as absolute paths, sorted. */
export function sourceFiles(dir = SRC): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(full);
      return /\.m?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
    })
    .sort();
}

/** The specifiers a file names, as written. */
export function specifiersOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/\b(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/g),
    ...text.matchAll(/\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]);
}

/**
 * The source file a relative specifier loads (`./x`, `./x.js`, `./dir` for `./dir/index.ts`), or null for a
 * package or a file that is not a module of ours (package.json).
 */
export function resolveSpecifier(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  if (/\.json$/.test(specifier)) return null;
  const base = path.resolve(path.dirname(from), specifier).replace(/\.(m?)js$/, '.$1ts');
  for (const candidate of [base, `${base}.ts`, `${base}.mts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`${path.relative(SRC, from)} imports ${specifier}, which names no source file`);
}

/** The source files a file imports (packages left out), as absolute paths. */
export function localImportsOf(file: string): string[] {
  return [...new Set(specifiersOf(file).map((s) => resolveSpecifier(file, s)).filter((f): f is string => f !== null))];
}

/** A path relative to src/, with forward slashes (`store/index.ts`). */
export function srcRelative(file: string): string {
  return path.relative(SRC, file).split(path.sep).join('/');
}
