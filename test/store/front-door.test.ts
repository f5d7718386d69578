/**
 * The store's front door (issue 26): everything outside src/store imports the store through
 * src/store/index.ts, and nothing outside the store and the read model reaches into an open store's parts.
 *
 * 1. Imports, of every kind (type-only, re-exports, require(), import()): a file outside src/store that
 *    names a module of the store names src/store/index.ts, except the EXCEPTIONS below, each with its
 *    reason. Nothing inside src/store imports the front door (it is only the way in).
 * 2. Members: an edge — any file outside src/store and src/history — never touches the parts of a
 *    MemoryStore that are the store's own (its history index, objects, trees and readers, call log,
 *    timeline, flags, the redaction port, the operator's commit writers). It asks the read model
 *    (src/history) or a narrow method of the store. Checked with the TypeScript compiler: every property
 *    access, element access and destructuring whose object is a MemoryStore (or a subclass).
 */
import * as path from 'node:path';
import * as ts from 'typescript';
import { REPO_ROOT } from '../support/dist';
import { localImportsOf, SRC, sourceFiles, specifiersOf, srcRelative } from '../support/source-imports';

interface Exception {
  /** Files (relative to src/) the exception is for. */
  from: RegExp;
  /** Store modules (relative to src/) they may import. */
  to: RegExp;
  why: string;
}

const EXCEPTIONS: Exception[] = [
  {
    from: /^history\//,
    to: /^store\/history-index\//,
    why: 'the read model (src/history) is the one reader of the index the writer keeps: it wraps it for every edge',
  },
];

function isStoreModule(rel: string): boolean {
  return rel.startsWith('store/');
}

describe('the front door of the store (src/store/index.ts)', () => {
  it('finds the imports it checks (the scan itself works)', () => {
    const log = localImportsOf(path.join(SRC, 'cli/commands/log.ts')).map(srcRelative);
    expect(log).toEqual(expect.arrayContaining(['store/index.ts', 'history/log.ts']));
    expect(specifiersOf(path.join(SRC, 'cli/commands/log.ts'))).toEqual(expect.arrayContaining(['commander']));
    expect(localImportsOf(path.join(SRC, 'history/log.ts')).map(srcRelative)).toEqual(expect.arrayContaining(['store/history-index/entry.ts']));
  });

  it('is the only way into the store from outside it, but for the listed exceptions', () => {
    const offending: string[] = [];
    for (const file of sourceFiles()) {
      const from = srcRelative(file);
      if (from.startsWith('store/')) continue;
      for (const to of localImportsOf(file).map(srcRelative)) {
        if (!isStoreModule(to) || to === 'store/index.ts') continue;
        if (EXCEPTIONS.some((e) => e.from.test(from) && e.to.test(to))) continue;
        offending.push(`${from} imports ${to}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('keeps each exception in use (a stale one is removed, not left to widen the door)', () => {
    const used = EXCEPTIONS.map((e) =>
      sourceFiles().some((file) => e.from.test(srcRelative(file)) && localImportsOf(file).map(srcRelative).some((to) => e.to.test(to))),
    );
    expect(used).toEqual(EXCEPTIONS.map(() => true));
    for (const e of EXCEPTIONS) expect(e.why.length).toBeGreaterThan(40);
  });

  it('is not used from inside the store', () => {
    const offending = sourceFiles(path.join(SRC, 'store'))
      .filter((file) => localImportsOf(file).map(srcRelative).includes('store/index.ts'))
      .map(srcRelative);
    expect(offending).toEqual([]);
  });
});

/** The parts of an open store that are its own: edges ask the read model or a narrow method instead. */
const STORE_PARTS = new Set([
  'history',
  'objects',
  'commitTree',
  'readerAt',
  'readerAtCommitTree',
  'callLog',
  'timeline',
  'flags',
  'redaction',
  'writeCommit',
  'writeCommits',
]);

describe("edges and a store's parts", () => {
  let program: ts.Program;
  let storeClass: ts.Symbol;

  beforeAll(() => {
    const config = ts.readConfigFile(path.join(REPO_ROOT, 'tsconfig.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO_ROOT);
    program = ts.createProgram(sourceFiles(), { ...parsed.options, noEmit: true });
    const hub = program.getSourceFile(path.join(SRC, 'store/memory-store.ts'))!;
    const checker = program.getTypeChecker();
    const declaration = hub.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === 'MemoryStore')!;
    storeClass = checker.getSymbolAtLocation(declaration.name!)!;
  }, 120_000);

  /** Accesses of store parts in a file: `store.history`, `store['objects']`, `const { flags } = store`. */
  function reachesOf(file: string): string[] {
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(file)!;
    const isStore = (type: ts.Type): boolean => {
      if (type.isUnion()) return type.types.some(isStore);
      const symbol = type.getSymbol();
      if (!symbol) return false;
      if (symbol === storeClass) return true;
      return type.isClassOrInterface() && (checker.getBaseTypes(type as ts.InterfaceType) ?? []).some(isStore);
    };
    const found: string[] = [];
    const report = (node: ts.Node, name: string) => {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      found.push(`${srcRelative(file)}:${line + 1} .${name}`);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node) && STORE_PARTS.has(node.name.text) && isStore(checker.getTypeAtLocation(node.expression))) {
        report(node, node.name.text);
      } else if (
        ts.isElementAccessExpression(node) &&
        ts.isStringLiteralLike(node.argumentExpression) &&
        STORE_PARTS.has(node.argumentExpression.text) &&
        isStore(checker.getTypeAtLocation(node.expression))
      ) {
        report(node, node.argumentExpression.text);
      } else if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer && isStore(checker.getTypeAtLocation(node.initializer))) {
        for (const element of node.name.elements) {
          const name = element.propertyName ?? element.name;
          if (ts.isIdentifier(name) && STORE_PARTS.has(name.text)) report(element, name.text);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  }

  it('finds the reaches it checks (the check itself works)', () => {
    // The read model may read the history index and the objects; the check must see it do so.
    const memoryAt = reachesOf(path.join(SRC, 'history/memory-at.ts'));
    expect(memoryAt.some((r) => r.endsWith('.objects'))).toBe(true);
    expect(memoryAt.some((r) => r.endsWith('.commitTree'))).toBe(true);
    expect(reachesOf(path.join(SRC, 'history/summary.ts')).some((r) => r.endsWith('.history'))).toBe(true);
  });

  it('no edge reaches into them: edges ask src/history or a narrow method of the store', () => {
    const edges = sourceFiles().filter((file) => !/^(store|history)\//.test(srcRelative(file)));
    expect(edges.length).toBeGreaterThan(80);
    expect(edges.flatMap(reachesOf)).toEqual([]);
  });
});
