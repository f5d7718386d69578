/**
 * The order in which jest starts the test files: the longest first, so that no long file starts last and
 * runs alone while the other workers sit idle (the tail of the run). Jest's own sequencer knows the
 * durations only from its cache of an earlier run on the same machine; on a fresh clone (CI) it falls back
 * to the files' sizes, and a small file that starts a Python build or a fault sweep may then start last.
 *
 * So durations come, in this order, from jest's cache (an earlier run here), from test/support/durations.json
 * (seconds per file, measured by `npm run test:durations` and committed), and for a file in neither from
 * its size (about one second per 2,000 bytes, the suite's rough average). Failed files of the last run
 * still go first, as jest does.
 */
const fs = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const DURATIONS_FILE = path.join(__dirname, 'durations.json');
const TEST_DIR = path.join(__dirname, '..');

function readDurations() {
  try {
    return JSON.parse(fs.readFileSync(DURATIONS_FILE, 'utf8')).seconds ?? {};
  } catch {
    return {};
  }
}

class LongestFirst extends Sequencer {
  sort(tests) {
    const measured = readDurations();
    const estimate = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached / 1000;
      const known = measured[path.relative(TEST_DIR, test.path).split(path.sep).join('/')];
      if (known != null) return known;
      return (test.context.hasteFS.getSize(test.path) ?? 0) / 2000;
    };
    const keyed = tests.map((test) => ({ test, failed: this.hasFailed(test), seconds: estimate(test) }));
    keyed.sort((a, b) => (a.failed !== b.failed ? (a.failed ? -1 : 1) : b.seconds - a.seconds));
    return keyed.map((k) => k.test);
  }
}

module.exports = LongestFirst;
