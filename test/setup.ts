/**
 * Loaded before every test file (bunfig.toml's `[test] preload`). Bun reads no timeout from
 * bunfig.toml, so every test and hook would get its 5 s default; tests here drive real servers,
 * git and ssh processes, which a machine whose cores are busy slows many times over. The limit
 * is there to catch a hang, not to time anything: timing lives in bench/.
 */
import { setDefaultTimeout } from 'bun:test'

setDefaultTimeout(120_000)
