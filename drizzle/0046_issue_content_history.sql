CREATE TABLE `issue_content_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`issue_id` integer NOT NULL,
	`comment_id` integer,
	`poster_id` integer NOT NULL,
	`content_text` text NOT NULL,
	`is_first_created` integer DEFAULT false NOT NULL,
	`is_deleted` integer DEFAULT false NOT NULL,
	`edited_unix` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`comment_id`) REFERENCES `comments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `issue_content_history_item_idx` ON `issue_content_history` (`issue_id`,`comment_id`,`edited_unix`);--> statement-breakpoint
CREATE INDEX `issue_content_history_comment_idx` ON `issue_content_history` (`comment_id`);