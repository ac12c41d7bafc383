CREATE TABLE `repo_redirects` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner_id` integer NOT NULL,
	`lower_name` text NOT NULL,
	`repo_id` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `repo_redirects_name_uq` ON `repo_redirects` (`owner_id`,`lower_name`);--> statement-breakpoint
CREATE INDEX `repo_redirects_repo_idx` ON `repo_redirects` (`repo_id`);