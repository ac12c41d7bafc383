/**
 * A number in a URL path ("12") → 12; anything else (letters, signs, more than 15 digits) → NaN,
 * which matches no row, so the route answers 404 rather than 422 or a SQLite binding error.
 */
export const pathNumber = (value: string): number => (/^\d{1,15}$/.test(value) ? Number(value) : NaN)
