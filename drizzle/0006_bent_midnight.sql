CREATE TABLE `mirrors` (
	`repo_id` integer PRIMARY KEY NOT NULL,
	`remote_address` text NOT NULL,
	`auth_username` text DEFAULT '' NOT NULL,
	`auth_password_sealed` text DEFAULT '' NOT NULL,
	`interval` integer NOT NULL,
	`next_update_unix` integer DEFAULT 0 NOT NULL,
	`updated_unix` integer DEFAULT 0 NOT NULL,
	`last_error` text DEFAULT '' NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mirrors_next_update_idx` ON `mirrors` (`interval`,`next_update_unix`);