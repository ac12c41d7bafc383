// One module per area; this file is what drizzle-kit and the client read.
export * from './users'
export * from './repos'
export * from './orgs'
export * from './issues'
export * from './events'
export * from './deploy-keys'
export * from './commit-statuses'
export * from './mirrors'
