/**
 * Where the API's routes are: each area adds its routes to the app itself under this prefix
 * (src/auth/pipeline.ts `area`, src/app.ts `addAreas`); the few made as instances of their own
 * (OAuth2's applications, the packages registry's own prefix aside) are made with it.
 */
export const API_PREFIX = '/api/v1'
