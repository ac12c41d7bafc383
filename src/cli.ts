#!/usr/bin/env bun
/**
 * The `warren` command's entry (src/commands.ts holds the commands). A start runs a burst of code
 * once: the modules' bodies, the app's routes, the first requests' handlers. Compiling it with
 * JavaScriptCore's JIT costs CPU and memory that nothing earns back, so the JIT is made
 * STARTING_JIT_POLICY times more reluctant before any other code loads (it is imported after
 * this line): at 10,000 times nothing of a start reaches even the baseline JIT, whose code and
 * the pages of Bun's executable that compile it stay out of an idle server's memory (idle RSS of
 * the `npm start` bundle 66 → 61 MiB against 100 times, CPU to the first answer unchanged);
 * `warren serve` restores the normal policy once it has served for a moment, the other commands
 * as soon as they are known (commands.ts).
 */
const STARTING_JIT_POLICY = 10_000
Bun.unsafe.setJITPolicy(STARTING_JIT_POLICY)
await import('./commands')

// A module: its top-level await needs one.
export {}
