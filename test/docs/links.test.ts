/**
 * Every relative link of the README and the guides leads somewhere: the file exists, and a `#fragment`
 * names a heading of it (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens, a number
 * added to repeats). Each guide opens with its own table of contents, and the README stays a front page.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/dist';

const DOCUMENTS = [
  'README.md',
  ...fs.readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`),
  ...fs.readdirSync(path.join(REPO_ROOT, 'examples')).sort().flatMap((d) => (fs.existsSync(path.join(REPO_ROOT, 'examples', d, 'README.md')) ? [`examples/${d}/README.md`] : [])),
];

/** The guides written for one job each; the reference documents (contract, records, benchmarks, reliability) are kept as they are. */
const GUIDES = ['audit-ui', 'chat', 'cli', 'code-map', 'demo', 'languages', 'library', 'mcp', 'performance', 'redaction', 'replication', 'rollback', 'service', 'store-layout'].map((g) => `docs/${g}.md`);

/** The markdown with fenced blocks and inline code spans blanked out (links inside them are not links). */
function prose(markdown: string): string {
  return markdown.replace(/^(\s*)(`{3,}|~{3,})[\s\S]*?^\s*\2\s*$/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor of a heading. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const withoutFences = markdown.replace(/^(\s*)(`{3,}|~{3,})[\s\S]*?^\s*\2\s*$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.*?)\s*#*\s*$/gm)) {
    const base = slug(match[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

test('GitHub anchors are computed as GitHub does', () => {
  expect(slug('`MemoryStore.open(repoDir, options?)` → `Promise<MemoryStore>`')).toBe('memorystoreopenrepodir-options--promisememorystore');
  expect(slug('Get `memgit` on your PATH')).toBe('get-memgit-on-your-path');
  expect(slug('1. The library in the SDK\'s tool runner')).toBe('1-the-library-in-the-sdks-tool-runner');
  expect([...anchors('# A\n## B\n```\n# not a heading\n```\n## B\n')]).toEqual(['a', 'b', 'b-1']);
});

test.each(DOCUMENTS)('every relative link of %s leads to a file and heading that exist', (file) => {
  const text = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
  const broken: string[] = [];
  for (const match of prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [where, fragment] = target.split('#');
    const resolved = where === '' ? path.join(REPO_ROOT, file) : path.resolve(path.dirname(path.join(REPO_ROOT, file)), decodeURIComponent(where));
    if (!resolved.startsWith(REPO_ROOT) || !fs.existsSync(resolved)) {
      broken.push(`${target}: no such file`);
      continue;
    }
    if (fragment !== undefined && resolved.endsWith('.md') && !anchors(fs.readFileSync(resolved, 'utf8')).has(fragment)) {
      broken.push(`${target}: no heading with that anchor`);
    }
  }
  expect(broken).toEqual([]);
});

test.each(GUIDES)('%s opens with its own table of contents, linking to its own sections', (file) => {
  const text = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
  const own = anchors(text);
  const beforeFirstSection = text.split(/^## /m)[0];
  const toc = [...beforeFirstSection.matchAll(/^- \[[^\]]+\]\(#([^)]+)\)/gm)].map((m) => m[1]);
  const withoutFences = text.replace(/^(\s*)(`{3,}|~{3,})[\s\S]*?^\s*\2\s*$/gm, '');
  const sections = [...withoutFences.matchAll(/^## (.*)$/gm)].map((m) => slug(m[1]));
  expect(toc.length).toBeGreaterThanOrEqual(Math.min(3, sections.length));
  for (const anchor of toc) expect([anchor, own.has(anchor)]).toEqual([anchor, true]);
  expect(sections.filter((s) => !toc.includes(s))).toEqual([]);
});

test('the README is a front page: under 250 lines, the two commands first, one screenshot, links to every guide', () => {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  expect(text.split('\n').length).toBeLessThan(250);
  const firstBlocks = [...text.matchAll(/^```sh\n([\s\S]*?)^```/gm)].slice(0, 2).map((m) => m[1].split('#')[0].trim());
  expect(firstBlocks).toEqual(['npm install && npm start', 'npm test']);
  expect([...text.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)]).toHaveLength(1);
  for (const guide of GUIDES) expect([guide, text.includes(`(${guide})`)]).toEqual([guide, true]);
});
