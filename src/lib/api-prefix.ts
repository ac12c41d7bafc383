/**
 * Where the API's routes are: every API module's Elysia instance is made with this prefix and
 * added to the app itself (app.ts). Elysia copies every route of an instance it is given, so
 * modules gathered under one prefixed instance first were each registered once more at a start.
 */
export const API_PREFIX = '/api/v1'
