/**
 * A one-line progress report on stderr for work that takes longer than a second (rebuilding the history
 * index of a freshly cloned store). Silent when stderr is not a terminal, so logs and tests stay clean.
 */
export interface Progress {
  update(done: number, total?: number): void;
  done(): void;
}

const SHOW_AFTER_MS = 1000;
const REDRAW_EVERY_MS = 100;

export function terminalProgress(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  const started = Date.now();
  let lastDraw = 0;
  let shown = false;
  return {
    update(done, total) {
      if (!stream.isTTY) return;
      const now = Date.now();
      if (now - started < SHOW_AFTER_MS || now - lastDraw < REDRAW_EVERY_MS) return;
      lastDraw = now;
      shown = true;
      const count = total ? `${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}` : done.toLocaleString('en-US');
      const width = 24;
      const bar = total ? `[${'#'.repeat(Math.round((width * done) / total)).padEnd(width, '.')}] ` : '';
      stream.write(`\rmemgit: ${label} ${bar}${count} (${((now - started) / 1000).toFixed(0)} s)\x1b[K`);
    },
    done() {
      if (shown) stream.write(`\rmemgit: ${label} done in ${((Date.now() - started) / 1000).toFixed(1)} s\x1b[K\n`);
    },
  };
}
