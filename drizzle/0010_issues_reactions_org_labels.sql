CREATE TABLE `reactions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` text NOT NULL,
	`issue_id` integer NOT NULL,
	`comment_id` integer DEFAULT 0 NOT NULL,
	`user_id` integer NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reactions_one_uq` ON `reactions` (`issue_id`,`comment_id`,`user_id`,`type`);--> statement-breakpoint
CREATE INDEX `reactions_comment_idx` ON `reactions` (`comment_id`);--> statement-breakpoint
CREATE INDEX `reactions_user_idx` ON `reactions` (`user_id`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_labels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer,
	`org_id` integer,
	`name` text NOT NULL,
	`color` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`num_issues` integer DEFAULT 0 NOT NULL,
	`num_closed_issues` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_labels`("id", "repo_id", "org_id", "name", "color", "description", "num_issues", "num_closed_issues", "created_unix", "updated_unix") SELECT "id", "repo_id", NULL, "name", "color", "description", "num_issues", "num_closed_issues", "created_unix", "updated_unix" FROM `labels`;--> statement-breakpoint
DROP TABLE `labels`;--> statement-breakpoint
ALTER TABLE `__new_labels` RENAME TO `labels`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `labels_repo_idx` ON `labels` (`repo_id`,`name`);--> statement-breakpoint
CREATE INDEX `labels_org_idx` ON `labels` (`org_id`,`name`);