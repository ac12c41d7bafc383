/** Plain comments (type 0) are the only ones the API lists; other types are timeline events. */
export const PLAIN_COMMENT = 0
