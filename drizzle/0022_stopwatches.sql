CREATE TABLE `stopwatches` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`issue_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `stopwatches_user_issue_uq` ON `stopwatches` (`user_id`,`issue_id`);--> statement-breakpoint
CREATE INDEX `stopwatches_issue_idx` ON `stopwatches` (`issue_id`);