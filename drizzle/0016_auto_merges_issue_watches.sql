CREATE TABLE `pull_auto_merges` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`pull_id` integer NOT NULL,
	`doer_id` integer NOT NULL,
	`merge_style` text NOT NULL,
	`title` text DEFAULT '' NOT NULL,
	`message` text DEFAULT '' NOT NULL,
	`delete_branch_after_merge` integer DEFAULT false NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`pull_id`) REFERENCES `pull_requests`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`doer_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pull_auto_merges_pull_uq` ON `pull_auto_merges` (`pull_id`);--> statement-breakpoint
CREATE TABLE `issue_watches` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`issue_id` integer NOT NULL,
	`is_watching` integer NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `issue_watches_user_issue_uq` ON `issue_watches` (`user_id`,`issue_id`);--> statement-breakpoint
CREATE INDEX `issue_watches_issue_idx` ON `issue_watches` (`issue_id`);