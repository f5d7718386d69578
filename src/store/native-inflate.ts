import { createRequire } from 'node:module';
import { inflateSync } from 'node:zlib';

/**
 * isomorphic-git inflates every object it reads — loose files and packed objects alike (GitPackIndex
 * .readSlice) — with `pako.inflate(buffer)`, zlib in JavaScript: 2–4× the time of node:zlib's native
 * inflate per object, most of a cold open's CPU after tree walking (issue 31 measured 21–23 µs against
 * 4–9 µs for a typical object). Its own switch to a native inflater (DecompressionStream) is hard-wired off
 * in 1.x, and memgit reads objects only through isomorphic-git, so this is where memgit's reads inflate:
 * pako's `inflate`, which isomorphic-git looks up on pako's exports object at every call, is replaced once
 * by node:zlib's `inflateSync` for the one-argument form isomorphic-git uses. Same contract: a Uint8Array of
 * the inflated bytes, data after the end of the zlib stream ignored (a packed object is handed the rest of
 * the pack), and a corrupt stream thrown as a string, as pako throws it (isomorphic-git turns a thrown
 * string into its DecompressionError). Calls with options (pako's `to: 'string'`, dictionaries…) still
 * go to pako. Streaming inflation (indexPack's pako.Inflate) is left as it is.
 */

type Inflate = (data: Uint8Array, options?: unknown) => Uint8Array | string;

const NATIVE = Symbol.for('memgit.native-inflate');

interface PakoExports {
  inflate: Inflate & { [NATIVE]?: true };
}

/** The pako isomorphic-git itself loads (resolved from isomorphic-git's own location: memgit does not depend on pako). */
export function isomorphicGitPako(): PakoExports {
  const load = createRequire(require.resolve('isomorphic-git'));
  return load('pako') as PakoExports;
}

/** Install the native inflate into pako's exports (once per process; idempotent). */
export function installNativeInflate(target: PakoExports = isomorphicGitPako()): void {
  if (target.inflate[NATIVE]) return;
  const original = target.inflate;
  const native = ((data: Uint8Array, options?: unknown) => {
    if (options !== undefined) return original(data, options);
    try {
      return inflateSync(data);
    } catch (error) {
      // pako's contract: corrupt data is thrown as its message (a string).
      throw (error as Error).message;
    }
  }) as PakoExports['inflate'];
  native[NATIVE] = true;
  target.inflate = native;
}

installNativeInflate();
