/** Where `memgit demo` builds its store unless told otherwise (git-ignored by the project). */
export const DEFAULT_DEMO_DIR = '.memgit-demo';
