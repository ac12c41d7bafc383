CREATE TABLE `push_mirrors` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`remote_name` text NOT NULL,
	`remote_address` text NOT NULL,
	`auth_username` text DEFAULT '' NOT NULL,
	`auth_password_sealed` text DEFAULT '' NOT NULL,
	`interval` integer NOT NULL,
	`sync_on_commit` integer DEFAULT false NOT NULL,
	`next_update_unix` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	`last_update_unix` integer DEFAULT 0 NOT NULL,
	`last_error` text DEFAULT '' NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `push_mirrors_name_idx` ON `push_mirrors` (`repo_id`,`remote_name`);--> statement-breakpoint
CREATE INDEX `push_mirrors_next_update_idx` ON `push_mirrors` (`interval`,`next_update_unix`);