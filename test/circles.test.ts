/**
 * No import circles in src/ (issue 26): a module never depends, through any chain of imports, on itself.
 * Type-only imports count too: a circle of types is how a circle of code starts (types that live in an
 * implementation file pull that file's importers in), so types live in files of their own.
 */
import * as path from 'node:path';
import { localImportsOf, SRC, sourceFiles, srcRelative } from './support/source-imports';

/** The strongly connected components with more than one file (or a file importing itself): Tarjan's algorithm. */
function circles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

function importGraph(): Map<string, string[]> {
  return new Map(sourceFiles().map((file) => [srcRelative(file), localImportsOf(file).map(srcRelative)]));
}

describe('the import graph of src/', () => {
  it('is read whole (the scan finds imports of every kind)', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(150);
    // a type-only import, a re-export, a lazy require(), and an ES module import with its .js suffix
    expect(graph.get('store/rollback/port.ts')).toEqual(expect.arrayContaining(['store/commit-message.ts', 'store/objects.ts']));
    expect(graph.get('store/index.ts')).toEqual(expect.arrayContaining(['store/memory-store.ts', 'store/errors.ts']));
    expect(graph.get('index.ts')).toEqual(expect.arrayContaining(['compose/server.ts', 'store/index.ts']));
    expect(graph.get('index.mts')).toEqual(expect.arrayContaining(['index.ts', 'client/http-memory-tool.ts']));
  });

  it('finds a circle when there is one (the check itself works)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(circles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
  });

  it('has no circles', () => {
    const found = circles(importGraph()).map((component) => component.join(' <-> '));
    expect(found).toEqual([]);
    expect(path.basename(SRC)).toBe('src');
  });
});
