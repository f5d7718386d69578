import { execFileSync } from 'node:child_process';
import { Browser, chromium } from 'playwright-core';

/**
 * The browser tests' Chromium: Debian's `chromium`, found as the shell finds it (`which chromium`), with
 * the flags that keep it from reaching the network or a GPU. Missing, it fails loudly: `.ci/run`
 * installs it.
 */
export const CHROMIUM_PATH = findChromium();

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

function findChromium(): string {
  try {
    const found = execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim();
    if (found) return found;
  } catch {
    // reported below
  }
  throw new Error("the browser tests need Debian's chromium on PATH (apt-get install chromium; .ci/run installs it)");
}
