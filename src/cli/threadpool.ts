/**
 * Imported first by the CLI (and the benchmark), before anything touches the file system: libuv runs
 * every fs call — fsync included — on a pool of 4 threads by default, and one durable memgit call issues
 * about ten fsyncs at once (objects, their directories, the ref, working tree and index), so with 4
 * threads they queue in waves. 16 threads let them overlap. A library user sets UV_THREADPOOL_SIZE
 * in its own environment; an explicit value is always kept.
 */
process.env.UV_THREADPOOL_SIZE ??= '16';

export {};
