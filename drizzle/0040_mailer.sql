CREATE TABLE `mail_queue` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`recipient` text NOT NULL,
	`subject` text NOT NULL,
	`text_body` text NOT NULL,
	`html_body` text NOT NULL,
	`status` text DEFAULT 'waiting' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_ms` integer NOT NULL,
	`last_error` text DEFAULT '' NOT NULL,
	`created_unix` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `mail_queue_due_idx` ON `mail_queue` (`status`,`next_attempt_ms`);--> statement-breakpoint
CREATE TABLE `user_codes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`purpose` text NOT NULL,
	`code_hash` text NOT NULL,
	`email` text DEFAULT '' NOT NULL,
	`password_stamp` text NOT NULL,
	`created_unix` integer NOT NULL,
	`expires_unix` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `user_codes_hash_uq` ON `user_codes` (`code_hash`);--> statement-breakpoint
CREATE INDEX `user_codes_user_idx` ON `user_codes` (`user_id`,`purpose`);--> statement-breakpoint
ALTER TABLE `users` ADD `email_notifications_preference` text DEFAULT 'enabled' NOT NULL;