/**
 * Where the tests' temporary folders go (jest.config.js's globalSetup and globalTeardown): a fresh folder
 * in memory (/dev/shm, a tmpfs) when the machine has one, handed to every test file and everything they
 * start through TMPDIR (os.tmpdir(), git, pip and Chromium all read it). The tests make thousands of
 * stores and fsync every write; on a disk each fsync waits for the journal, and so do the unlinks and
 * renames of the tests beside it. No test depends on the disk itself: durability is tested by failing
 * the calls (test/store/fault-injector.ts) and by kill -9, which loses nothing a tmpfs holds either.
 *
 * MEMGIT_TEST_TMPDIR names another folder; MEMGIT_TEST_TMPDIR=os keeps os.tmpdir() as it is.
 */
const fs = require('node:fs');
const path = require('node:path');

const TMPFS_MAGIC = 0x01021994;
const MEMORY = '/dev/shm';

function memoryFolder() {
  try {
    if (fs.statfsSync(MEMORY).type !== TMPFS_MAGIC) return null;
    fs.accessSync(MEMORY, fs.constants.W_OK | fs.constants.X_OK);
    // Headroom for the suite's stores, servers and Python environments (about 1 GiB at its peak).
    const { bavail, bsize } = fs.statfsSync(MEMORY);
    return bavail * bsize >= 4 * 1024 ** 3 ? MEMORY : null;
  } catch {
    return null;
  }
}

/** Answers the folder made (or null when os.tmpdir() stays). */
function makeTempRoot(env = process.env) {
  const asked = env.MEMGIT_TEST_TMPDIR;
  if (asked === 'os') return null;
  const parent = asked || memoryFolder();
  if (!parent) return null;
  const root = fs.mkdtempSync(path.join(parent, 'memgit-tests-'));
  // Others may pass through (a test hands work to `nobody`, which must reach its own folders in here),
  // not list what is inside; each test makes its own folder of mode 0700 below.
  fs.chmodSync(root, 0o711);
  return root;
}

module.exports = async function setup() {
  const root = makeTempRoot();
  if (!root) return;
  process.env.MEMGIT_TEST_TEMP_ROOT = root;
  process.env.TMPDIR = root; // inherited by the workers jest starts after this, and by what they start
};

module.exports.teardown = async function teardown() {
  const root = process.env.MEMGIT_TEST_TEMP_ROOT;
  if (root && path.basename(root).startsWith('memgit-tests-')) fs.rmSync(root, { recursive: true, force: true });
};
module.exports.makeTempRoot = makeTempRoot;
