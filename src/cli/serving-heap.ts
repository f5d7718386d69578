import { tuneHeapForServing } from './heap';

/**
 * Imported by the CLI right after threadpool.ts, before the modules it runs are loaded: when the command is
 * `serve` or `server`, V8's serving heap flags (heap.ts) are set now. The young generation keeps the size
 * it has when the flag is set, and loading the UI's and the server's modules alone would grow it to its
 * maximum, so the command's own action (which sets them too, for a command line this does not recognise)
 * would be too late for it.
 */
const command = process.argv.slice(2).find((arg) => !arg.startsWith('-'));
if (command === 'serve' || command === 'server') tuneHeapForServing();

export {};
