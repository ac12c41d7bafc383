CREATE TABLE `notifications` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`repo_id` integer NOT NULL,
	`status` integer NOT NULL,
	`source` integer NOT NULL,
	`issue_id` integer,
	`comment_id` integer DEFAULT 0 NOT NULL,
	`updated_by` integer NOT NULL,
	`last_event_id` integer NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notifications_user_issue_uq` ON `notifications` (`user_id`,`issue_id`);--> statement-breakpoint
CREATE INDEX `notifications_user_status_idx` ON `notifications` (`user_id`,`status`,`updated_unix`);--> statement-breakpoint
CREATE INDEX `notifications_repo_idx` ON `notifications` (`repo_id`);--> statement-breakpoint
CREATE INDEX `notifications_issue_idx` ON `notifications` (`issue_id`);