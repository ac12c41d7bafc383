-- Trigram indexes of the texts the issue searches look through by substring (`title`/`content`
-- LIKE '%q%': GET /repos/{o}/{r}/issues?q=, the issues page's search, GET /repos/issues/search,
-- which also looks through plain comments), which no b-tree serves: SQLite's FTS5 with its trigram
-- tokenizer, as drizzle/0019 has for repository names and drizzle-pg/0040 pg_trgm's for PostgreSQL.
-- External content: the texts stay in `issues` and `comments`, the triggers below keep each index
-- in step with every insert, edit and deletion (cascades included). Comments: the plain ones only
-- (type 0), the only ones searched. The searches ask these for candidates (src/modules/issues/
-- text-search.ts) and keep their LIKE on the rows found. Hand-written: drizzle-kit writes no
-- virtual tables.
CREATE VIRTUAL TABLE IF NOT EXISTS `issues_text_trgm` USING fts5(title, content, content='issues', content_rowid='id', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `issues_text_trgm_insert` AFTER INSERT ON `issues` BEGIN
  INSERT INTO `issues_text_trgm` (rowid, title, content) VALUES (new.id, new.title, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `issues_text_trgm_delete` AFTER DELETE ON `issues` BEGIN
  INSERT INTO `issues_text_trgm` (`issues_text_trgm`, rowid, title, content) VALUES ('delete', old.id, old.title, old.content);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `issues_text_trgm_edit` AFTER UPDATE OF title, content ON `issues` BEGIN
  INSERT INTO `issues_text_trgm` (`issues_text_trgm`, rowid, title, content) VALUES ('delete', old.id, old.title, old.content);
  INSERT INTO `issues_text_trgm` (rowid, title, content) VALUES (new.id, new.title, new.content);
END;
--> statement-breakpoint
INSERT INTO `issues_text_trgm` (`issues_text_trgm`) VALUES ('rebuild');
--> statement-breakpoint
CREATE VIRTUAL TABLE IF NOT EXISTS `comments_text_trgm` USING fts5(content, content='comments', content_rowid='id', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `comments_text_trgm_insert` AFTER INSERT ON `comments` WHEN new.type = 0 BEGIN
  INSERT INTO `comments_text_trgm` (rowid, content) VALUES (new.id, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `comments_text_trgm_delete` AFTER DELETE ON `comments` WHEN old.type = 0 BEGIN
  INSERT INTO `comments_text_trgm` (`comments_text_trgm`, rowid, content) VALUES ('delete', old.id, old.content);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `comments_text_trgm_edit` AFTER UPDATE OF content, type ON `comments` WHEN old.type = 0 OR new.type = 0 BEGIN
  INSERT INTO `comments_text_trgm` (`comments_text_trgm`, rowid, content) SELECT 'delete', old.id, old.content WHERE old.type = 0;
  INSERT INTO `comments_text_trgm` (rowid, content) SELECT new.id, new.content WHERE new.type = 0;
END;
--> statement-breakpoint
INSERT INTO `comments_text_trgm` (rowid, content) SELECT id, content FROM `comments` WHERE type = 0;
