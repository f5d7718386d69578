#!/usr/bin/env node
import './threadpool'; // first: sizes libuv's pool before any file system call
import './serving-heap'; // then V8's heap flags for serve and server, before the modules they load
import { runCli } from '../compose/cli';

/**
 * The `memgit` executable (package.json's bin, dist/src/cli/main.js: the path users put in MCP client
 * configs and service units). It sits here for that path, but it is the composition's: the one file under
 * src/cli that imports src/compose, which hands the CLI (program.ts) what it runs from the other edges.
 */
if (require.main === module) void runCli(process.argv);
