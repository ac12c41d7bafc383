CREATE TABLE `deploy_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`title` text NOT NULL,
	`fingerprint` text NOT NULL,
	`content` text NOT NULL,
	`key_type` text NOT NULL,
	`read_only` integer DEFAULT true NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deploy_keys_repo_fingerprint_idx` ON `deploy_keys` (`repo_id`,`fingerprint`);--> statement-breakpoint
CREATE UNIQUE INDEX `deploy_keys_repo_title_idx` ON `deploy_keys` (`repo_id`,`title`);--> statement-breakpoint
CREATE INDEX `deploy_keys_fingerprint_idx` ON `deploy_keys` (`fingerprint`);--> statement-breakpoint
CREATE TABLE `commit_statuses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`sha` text NOT NULL,
	`index` integer NOT NULL,
	`state` text NOT NULL,
	`target_url` text DEFAULT '' NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`context` text DEFAULT '' NOT NULL,
	`creator_id` integer NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `commit_statuses_repo_sha_index_idx` ON `commit_statuses` (`repo_id`,`sha`,`index`);--> statement-breakpoint
CREATE INDEX `commit_statuses_repo_sha_context_idx` ON `commit_statuses` (`repo_id`,`sha`,`context`);