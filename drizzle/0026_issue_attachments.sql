PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_attachments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uuid` text NOT NULL,
	`repo_id` integer NOT NULL,
	`release_id` integer,
	`issue_id` integer,
	`comment_id` integer,
	`uploader_id` integer NOT NULL,
	`name` text NOT NULL,
	`size` integer NOT NULL,
	`download_count` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`release_id`) REFERENCES `releases`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`comment_id`) REFERENCES `comments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_attachments`("id", "uuid", "repo_id", "release_id", "issue_id", "comment_id", "uploader_id", "name", "size", "download_count", "created_unix") SELECT "id", "uuid", "repo_id", "release_id", NULL, NULL, "uploader_id", "name", "size", "download_count", "created_unix" FROM `attachments`;--> statement-breakpoint
DROP TABLE `attachments`;--> statement-breakpoint
ALTER TABLE `__new_attachments` RENAME TO `attachments`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `attachments_uuid_uq` ON `attachments` (`uuid`);--> statement-breakpoint
CREATE UNIQUE INDEX `attachments_release_name_uq` ON `attachments` (`release_id`,`name`);--> statement-breakpoint
CREATE INDEX `attachments_repo_idx` ON `attachments` (`repo_id`);--> statement-breakpoint
CREATE INDEX `attachments_issue_idx` ON `attachments` (`issue_id`,`comment_id`);--> statement-breakpoint
CREATE INDEX `attachments_comment_idx` ON `attachments` (`comment_id`);