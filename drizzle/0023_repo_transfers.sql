CREATE TABLE `repo_transfers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`doer_id` integer NOT NULL,
	`recipient_id` integer NOT NULL,
	`team_ids` text DEFAULT '[]' NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`doer_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`recipient_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `repo_transfers_repo_uq` ON `repo_transfers` (`repo_id`);--> statement-breakpoint
CREATE INDEX `repo_transfers_recipient_idx` ON `repo_transfers` (`recipient_id`);