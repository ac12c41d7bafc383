CREATE TABLE `event_consumers` (
	`name` text PRIMARY KEY NOT NULL,
	`done_id` integer DEFAULT 0 NOT NULL,
	`claimed_id` integer DEFAULT 0 NOT NULL,
	`lease_until_ms` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`repo_id` integer,
	`actor_id` integer,
	`issue_id` integer,
	`comment_id` integer,
	`payload` text DEFAULT '{}' NOT NULL,
	`created_unix` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_repo_idx` ON `events` (`repo_id`,`id`);--> statement-breakpoint
CREATE TABLE `pending_pushes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`pusher_id` integer NOT NULL,
	`commands` text,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `pending_pushes_repo_idx` ON `pending_pushes` (`repo_id`);--> statement-breakpoint
CREATE TABLE `repo_git_states` (
	`repo_id` integer PRIMARY KEY NOT NULL,
	`refs` text DEFAULT '{}' NOT NULL,
	`fingerprint` text DEFAULT '' NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
