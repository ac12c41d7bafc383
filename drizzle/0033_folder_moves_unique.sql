-- A crash in a race of two moves of one folder (before this index) could leave two intents for it: the first written is kept.
DELETE FROM `folder_moves` WHERE `id` NOT IN (SELECT MIN(`id`) FROM `folder_moves` GROUP BY `from_path`);--> statement-breakpoint
CREATE UNIQUE INDEX `folder_moves_from_path_uq` ON `folder_moves` (`from_path`);