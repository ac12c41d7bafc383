#!/usr/bin/env bun
/**
 * The `warren` command's entry (src/commands.ts holds the commands). A start runs a burst of code
 * once: the modules' bodies, the app's routes, the first requests' handlers. Compiling it with
 * JavaScriptCore's JIT costs CPU and memory that nothing earns back, so the JIT is made
 * STARTING_JIT_POLICY times more reluctant before any other code loads (it is imported after
 * this line); `warren serve` restores the normal policy once it has served for a moment, the
 * other commands as soon as they are known (commands.ts).
 */
const STARTING_JIT_POLICY = 100
Bun.unsafe.setJITPolicy(STARTING_JIT_POLICY)
await import('./commands')

// A module: its top-level await needs one.
export {}
