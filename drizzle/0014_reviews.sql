CREATE TABLE `review_comments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`review_id` integer NOT NULL,
	`issue_id` integer NOT NULL,
	`poster_id` integer NOT NULL,
	`content` text DEFAULT '' NOT NULL,
	`path` text NOT NULL,
	`line` integer NOT NULL,
	`commit_id` text NOT NULL,
	`line_sha` text DEFAULT '' NOT NULL,
	`patch` text DEFAULT '' NOT NULL,
	`invalidated` integer DEFAULT false NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`review_id`) REFERENCES `reviews`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `review_comments_review_idx` ON `review_comments` (`review_id`);--> statement-breakpoint
CREATE INDEX `review_comments_issue_idx` ON `review_comments` (`issue_id`);--> statement-breakpoint
CREATE TABLE `reviews` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` integer NOT NULL,
	`issue_id` integer NOT NULL,
	`repo_id` integer NOT NULL,
	`reviewer_id` integer DEFAULT 0 NOT NULL,
	`reviewer_team_id` integer DEFAULT 0 NOT NULL,
	`content` text DEFAULT '' NOT NULL,
	`official` integer DEFAULT false NOT NULL,
	`commit_id` text DEFAULT '' NOT NULL,
	`dismissed` integer DEFAULT false NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `reviews_issue_idx` ON `reviews` (`issue_id`,`type`);--> statement-breakpoint
CREATE INDEX `reviews_reviewer_idx` ON `reviews` (`reviewer_id`);