-- A trigram index of repository names for the search by substring (`lower_name LIKE '%q%'`, GET
-- /repos/search), which no b-tree serves: SQLite's FTS5 with its trigram tokenizer over
-- repositories.lower_name, as PostgreSQL has pg_trgm's (drizzle-pg/0009_trigram_search.sql).
-- External content: the names stay in `repositories`, the triggers below keep the index in step
-- with every insert, rename and deletion. Hand-written: drizzle-kit writes no virtual tables.
-- bench/scale.ts: a search at 100,000 repositories read every name (22 ms), now 0.1 ms.
CREATE VIRTUAL TABLE IF NOT EXISTS `repositories_name_trgm` USING fts5(lower_name, content='repositories', content_rowid='id', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `repositories_name_trgm_insert` AFTER INSERT ON `repositories` BEGIN
  INSERT INTO `repositories_name_trgm` (rowid, lower_name) VALUES (new.id, new.lower_name);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `repositories_name_trgm_delete` AFTER DELETE ON `repositories` BEGIN
  INSERT INTO `repositories_name_trgm` (`repositories_name_trgm`, rowid, lower_name) VALUES ('delete', old.id, old.lower_name);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `repositories_name_trgm_rename` AFTER UPDATE OF lower_name ON `repositories` BEGIN
  INSERT INTO `repositories_name_trgm` (`repositories_name_trgm`, rowid, lower_name) VALUES ('delete', old.id, old.lower_name);
  INSERT INTO `repositories_name_trgm` (rowid, lower_name) VALUES (new.id, new.lower_name);
END;
--> statement-breakpoint
INSERT INTO `repositories_name_trgm` (`repositories_name_trgm`) VALUES ('rebuild');
