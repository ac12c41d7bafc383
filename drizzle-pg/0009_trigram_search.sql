-- Trigram indexes (pg_trgm) for the searches by substring: `lower_name LIKE '%q%'` (repositories)
-- and `name LIKE '%q%'` (topics), which no b-tree serves. Hand-written: drizzle-kit neither creates
-- extensions nor writes a step that may be skipped. Where the extension cannot be created (not
-- installed, or the role may not create it) the migration goes on without the indexes: the
-- searches then read the tables as before, with the same answers.
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'pg_trgm is not available (%): substring searches run without trigram indexes', SQLERRM;
END
$$;
--> statement-breakpoint
DO $$
DECLARE
  ops text;
BEGIN
  -- The operator class by its schema, wherever the extension was installed.
  SELECT quote_ident(n.nspname) || '.gin_trgm_ops' INTO ops
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  IF ops IS NOT NULL THEN
    EXECUTE 'CREATE INDEX IF NOT EXISTS repositories_lower_name_trgm_idx ON repositories USING gin (lower_name ' || ops || ')';
    EXECUTE 'CREATE INDEX IF NOT EXISTS topics_name_trgm_idx ON topics USING gin (name ' || ops || ')';
  END IF;
END
$$;
