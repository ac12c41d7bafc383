-- The trigram indexes of drizzle/0048, made contentless with deletes (SQLite 3.43's
-- `contentless_delete=1`). An external-content FTS5 index forgets a row only when given its old
-- text, which it splits into trigrams again: deleting an issue or a repository whose comments held
-- megabytes of text held the event loop for seconds (30 comments of 1 MB: 0.5-1.2 s, 20-40 ms a
-- MB; random text far more). A contentless index with deletes forgets a rowid without its text. The
-- searches read only rowids from these (src/modules/issues/text-search.ts: MATCH, then the LIKE on
-- the rows found), which a contentless index answers. Filled again from the rows, as 0048 did.
DROP TRIGGER IF EXISTS `issues_text_trgm_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `issues_text_trgm_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `issues_text_trgm_edit`;
--> statement-breakpoint
DROP TABLE IF EXISTS `issues_text_trgm`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `comments_text_trgm_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `comments_text_trgm_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `comments_text_trgm_edit`;
--> statement-breakpoint
DROP TABLE IF EXISTS `comments_text_trgm`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `issues_text_trgm` USING fts5(title, content, content='', contentless_delete=1, tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `issues_text_trgm_insert` AFTER INSERT ON `issues` BEGIN
  INSERT INTO `issues_text_trgm` (rowid, title, content) VALUES (new.id, new.title, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER `issues_text_trgm_delete` AFTER DELETE ON `issues` BEGIN
  DELETE FROM `issues_text_trgm` WHERE rowid = old.id;
END;
--> statement-breakpoint
CREATE TRIGGER `issues_text_trgm_edit` AFTER UPDATE OF title, content ON `issues` BEGIN
  DELETE FROM `issues_text_trgm` WHERE rowid = old.id;
  INSERT INTO `issues_text_trgm` (rowid, title, content) VALUES (new.id, new.title, new.content);
END;
--> statement-breakpoint
INSERT INTO `issues_text_trgm` (rowid, title, content) SELECT id, title, content FROM `issues`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `comments_text_trgm` USING fts5(content, content='', contentless_delete=1, tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `comments_text_trgm_insert` AFTER INSERT ON `comments` WHEN new.type = 0 BEGIN
  INSERT INTO `comments_text_trgm` (rowid, content) VALUES (new.id, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER `comments_text_trgm_delete` AFTER DELETE ON `comments` WHEN old.type = 0 BEGIN
  DELETE FROM `comments_text_trgm` WHERE rowid = old.id;
END;
--> statement-breakpoint
CREATE TRIGGER `comments_text_trgm_edit` AFTER UPDATE OF content, type ON `comments` WHEN old.type = 0 OR new.type = 0 BEGIN
  DELETE FROM `comments_text_trgm` WHERE rowid = old.id AND old.type = 0;
  INSERT INTO `comments_text_trgm` (rowid, content) SELECT new.id, new.content WHERE new.type = 0;
END;
--> statement-breakpoint
INSERT INTO `comments_text_trgm` (rowid, content) SELECT id, content FROM `comments` WHERE type = 0;
