/**
 * The layers of src/ (ARCHITECTURE.md), each importing only those below it, checked by
 * test/layers.test.ts in `npm test`. No exceptions list: a rule that does not hold is fixed in
 * the code, not here.
 *
 *   cli, server, app, edge, jobs, ...  start, stop, serve (edge: the body parser, the OpenAPI document), background work
 *   web                                the web pages (beside the API's controllers: they use the areas' services)
 *   modules/<area>                     API controllers and the services of each area
 *   push, events, webhooks, notify, mail  the one path a ref moves through; the outbox; its consumers; the mail queue
 *   convert                            one converter per record
 *   auth, deps                         caller, access levels, the visibility rule, the pipeline
 *   git, db, lib, config, version      the command layer; schema and client; small shared pieces
 */
const BASE = '^src/(lib|db|git)/|^src/(config|version)\\.ts$'
const ABOVE_BASE = '^src/(auth|convert|push|events|webhooks|notify|mail|modules|web|jobs|ssh|ops)/|^src/(deps|app|server|cli|commands|serve)\\.ts$'
const ABOVE_AUTH = '^src/(convert|push|events|webhooks|notify|mail|modules|web|jobs|ssh|ops)/|^src/(app|server|cli|commands|serve)\\.ts$'
const ABOVE_CONVERT = '^src/(push|events|webhooks|notify|mail|modules|web|jobs|ssh|ops)/|^src/(app|server|cli|commands|serve)\\.ts$'
const TOP = '^src/(jobs|ssh|ops|edge)/|^src/(app|server|cli|commands|serve)\\.ts$'

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Two files that import each other (directly or around a loop) are one piece split in two.', from: {}, to: { circular: true } },
    { name: 'base-imports-nothing-above', severity: 'error', comment: 'lib, db, git, config and version import nothing above them.', from: { path: BASE }, to: { path: ABOVE_BASE } },
    { name: 'auth-imports-no-module', severity: 'error', comment: 'Who may see or change what is decided in auth, which imports no area, converter or consumer.', from: { path: '^src/auth/|^src/deps\\.ts$' }, to: { path: ABOVE_AUTH } },
    { name: 'convert-imports-no-service', severity: 'error', comment: 'Converters turn rows into records; they call no service and no consumer.', from: { path: '^src/convert/' }, to: { path: ABOVE_CONVERT } },
    { name: 'webhooks-use-convert-and-events-only', severity: 'error', comment: 'Webhook payloads and notification threads are built from the outbox and the converters, never from area services.', from: { path: '^src/(webhooks|notify|mail|events|push)/' }, to: { path: '^src/modules/|' + TOP } },
    { name: 'nothing-below-imports-web', severity: 'error', comment: 'The web pages sit above the areas: no area, consumer or lower layer imports them.', from: { path: '^src/(modules|push|events|webhooks|notify|mail|convert|auth|git|db|lib)/|^src/(deps|config|version)\\.ts$' }, to: { path: '^src/web/' } },
    { name: 'web-below-the-process', severity: 'error', comment: 'Pages do not import what starts and runs the process.', from: { path: '^src/web/' }, to: { path: TOP } },
    { name: 'modules-below-the-process', severity: 'error', comment: 'Areas do not import what starts and runs the process.', from: { path: '^src/modules/' }, to: { path: TOP } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^src/.*\\.d\\.ts$' },
  },
}
