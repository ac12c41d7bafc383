CREATE TABLE `user_blocks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`blocker_id` integer NOT NULL,
	`blockee_id` integer NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`blocker_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`blockee_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `user_blocks_pair_uq` ON `user_blocks` (`blocker_id`,`blockee_id`);--> statement-breakpoint
CREATE INDEX `user_blocks_blockee_idx` ON `user_blocks` (`blockee_id`);