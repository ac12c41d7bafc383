-- Trigram indexes (pg_trgm) of the texts the issue searches look through by substring
-- (`title`/`content` ILIKE '%q%': GET /repos/{o}/{r}/issues?q=, the issues page's search, GET
-- /repos/issues/search, which also looks through plain comments), which no b-tree serves; SQLite
-- has FTS5's (drizzle/0048). Comments: the plain ones only (type 0), the only ones searched.
-- Hand-written, as 0009: where pg_trgm is not installed the searches read the tables as before,
-- with the same answers.
DO $$
DECLARE
  ops text;
BEGIN
  SELECT quote_ident(n.nspname) || '.gin_trgm_ops' INTO ops
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  IF ops IS NOT NULL THEN
    EXECUTE 'CREATE INDEX IF NOT EXISTS issues_title_trgm_idx ON issues USING gin (title ' || ops || ')';
    EXECUTE 'CREATE INDEX IF NOT EXISTS issues_content_trgm_idx ON issues USING gin (content ' || ops || ')';
    EXECUTE 'CREATE INDEX IF NOT EXISTS comments_content_trgm_idx ON comments USING gin (content ' || ops || ') WHERE type = 0';
  END IF;
END
$$;
