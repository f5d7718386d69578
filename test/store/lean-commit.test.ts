/**
 * The history index's rebuild reads each commit's tree, parents, committer time and message from the
 * commit's bytes (src/store/lean-commit.ts). For every commit it accepts, those are the fields isomorphic-
 * git's readCommit gives for the same object; every commit it declines (null) is one isomorphic-git parses
 * in a way it does not follow, or refuses — and ObjectStore.readLeanCommit then answers as readCommit does.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { parseLeanCommit } from '../../src/store/lean-commit';
import { mulberry32 } from '../support/random';
import { makeTempDir, removeDir } from './git-helpers';

const TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const P1 = '1111111111111111111111111111111111111111';
const P2 = '2222222222222222222222222222222222222222';
const PERSON = 'Memgit Agent <agent@memgit.invalid> 1750000000 +0000';

/** Commits memgit and git write, and unusual ones isomorphic-git reads (or refuses) in its own way. */
const CASES: Record<string, { text: string; lean: boolean }> = {
  'a memgit call': {
    text: `tree ${TREE}\nparent ${P1}\nauthor ${PERSON}\ncommitter ${PERSON}\n\ntoolu_01\n\nMemory-Command: create\nMemory-Path: /memories/a.md\nMemory-Session: s1\n`,
    lean: true,
  },
  'the root commit': { text: `tree ${TREE}\nauthor ${PERSON}\ncommitter ${PERSON}\n\ninitialise\n`, lean: true },
  'a merge': { text: `tree ${TREE}\nparent ${P1}\nparent ${P2}\nauthor ${PERSON}\ncommitter ${PERSON}\n\nmerge\n`, lean: true },
  'CRs, leading and trailing blank lines': { text: `tree ${TREE}\nauthor ${PERSON}\ncommitter ${PERSON}\n\n\n\r\ntitle\r\n\r\nbody\r\n\n\n\n`, lean: true },
  'an empty message': { text: `tree ${TREE}\nauthor ${PERSON}\ncommitter ${PERSON}\n\n`, lean: true },
  'non-ASCII text': { text: `tree ${TREE}\nauthor Zoë <z@x> 1750000001 +0100\ncommitter Jörg Ünlü <j@x> 1750000002 -0230\n\nnaïve café ☕ 𝄞\n`, lean: true },
  'extra headers, a late parent and tree, the first committer wins': {
    text: `tree ${TREE}\nparent ${P1}\nauthor ${PERSON}\ncommitter A <a@x> 1750000003 +0000\nencoding UTF-8\nparent ${P2}\ntree ${P2}\ncommitter B <b@x> 1750000004 +0000\n\nlate\n`,
    lean: true,
  },
  'committer before author': { text: `tree ${TREE}\ncommitter ${PERSON}\nauthor ${PERSON}\n\nswapped\n`, lean: true },
  'no author': { text: `tree ${TREE}\ncommitter ${PERSON}\n\nno author\n`, lean: true },
  'a name with angle brackets and spaces': { text: `tree ${TREE}\nauthor ${PERSON}\ncommitter A <b> c <d@x> 1750000005 +0000\n\nodd name\n`, lean: true },
  'a non-numeric time': { text: `tree ${TREE}\nauthor ${PERSON}\ncommitter A <a@x> soon +0000\n\nNaN\n`, lean: true },
  'a signature (continued header)': {
    text: `tree ${TREE}\nparent ${P1}\nauthor ${PERSON}\ncommitter ${PERSON}\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n -----END PGP SIGNATURE-----\n\nsigned\n`,
    lean: false,
  },
  'a header without a value': { text: `tree ${TREE}\nauthor ${PERSON}\ncommitter ${PERSON}\nflag\n\nbare header\n`, lean: false },
  'no blank line': { text: `tree ${TREE}\nauthor ${PERSON}\ncommitter ${PERSON}\nmessage`, lean: false },
  'no committer': { text: `tree ${TREE}\nauthor ${PERSON}\n\nnobody\n`, lean: false },
  'a committer isomorphic-git cannot parse': { text: `tree ${TREE}\nauthor ${PERSON}\ncommitter nobody 1750000000 +0000\n\nbad committer\n`, lean: false },
  'an author isomorphic-git cannot parse': { text: `tree ${TREE}\nauthor nobody\ncommitter ${PERSON}\n\nbad author\n`, lean: false },
  'a bad time zone': { text: `tree ${TREE}\nauthor ${PERSON}\ncommitter A <a@x> 1750000000 UTC\n\nbad zone\n`, lean: false },
  'tree not first': { text: `parent ${P1}\ntree ${TREE}\nauthor ${PERSON}\ncommitter ${PERSON}\n\nmisplaced tree\n`, lean: false },
  'a header line starting with a space': { text: ` tree ${TREE}\nauthor ${PERSON}\ncommitter ${PERSON}\n\nindented\n`, lean: false },
};

/** What the history index takes from isomorphic-git's readCommit (or the error it throws). */
async function isomorphicGitFields(gitdir: string, bytes: Buffer): Promise<unknown> {
  const oid = await git.writeObject({ fs, gitdir, type: 'commit', object: bytes, format: 'content' });
  try {
    const { commit } = await git.readCommit({ fs, gitdir, oid });
    return { tree: commit.tree, parent: commit.parent, committer: { timestamp: commit.committer.timestamp }, message: commit.message };
  } catch (error) {
    return { refused: String((error as Error).name ?? error) };
  }
}

describe('parseLeanCommit', () => {
  let gitdir: string;
  beforeAll(async () => {
    gitdir = path.join(makeTempDir(), '.git');
    await git.init({ fs, gitdir, bare: true });
  });
  afterAll(() => removeDir(path.dirname(gitdir)));

  for (const [name, { text, lean }] of Object.entries(CASES)) {
    it(`${lean ? 'reads' : 'leaves to isomorphic-git'}: ${name}`, async () => {
      const bytes = Buffer.from(text, 'utf8');
      const parsed = parseLeanCommit(bytes);
      if (!lean) {
        expect(parsed).toBeNull();
        return;
      }
      expect(parsed).not.toBeNull();
      expect(parsed).toEqual(await isomorphicGitFields(gitdir, bytes));
    });
  }

  it('reads a commit inside a larger buffer (a view into a pack) by its own bytes only', () => {
    const text = CASES['a memgit call'].text;
    const backing = Buffer.from(`xxxx${text}yyyy`, 'utf8');
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 4, Buffer.byteLength(text));
    expect(parseLeanCommit(view)).toEqual(parseLeanCommit(Buffer.from(text, 'utf8')));
  });

  it('agrees with isomorphic-git on random commits made of the pieces above', async () => {
    const random = mulberry32(31);
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
    const headers = [`parent ${P1}`, `parent ${P2}`, `author ${PERSON}`, `committer ${PERSON}`, 'committer B <b@x> 1750000009 -0700', 'encoding UTF-8', 'committer bad', ' continued', 'mergetag x', `tree ${P2}`];
    const messages = ['', 'title\n', '\n\ntitle\r\n\r\nbody\n\n', 'Memory-Path: /memories/x.md\n', 'é\n'];
    let accepted = 0;
    for (let k = 0; k < 300; k++) {
      const lines = [`tree ${TREE}`];
      const count = Math.floor(random() * 6);
      for (let i = 0; i < count; i++) lines.push(pick(headers));
      const bytes = Buffer.from(`${lines.join('\n')}\n\n${pick(messages)}`, 'utf8');
      const parsed = parseLeanCommit(bytes);
      if (parsed === null) continue;
      accepted++;
      expect(parsed).toEqual(await isomorphicGitFields(gitdir, bytes));
    }
    expect(accepted).toBeGreaterThan(30);
  });
});
