// One module per area: the one description of the schema (SQLite tables; PostgreSQL's are derived
// from these by ../pg-schema.ts). drizzle-kit reads this file; services import ./index.
export * from './users'
export * from './repos'
export * from './orgs'
export * from './issues'
export * from './events'
export * from './deploy-keys'
export * from './commit-statuses'
export * from './mirrors'
export * from './pulls'
export * from './releases'
export * from './webhooks'
export * from './protections'
