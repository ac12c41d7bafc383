CREATE TABLE `pull_requests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`issue_id` integer NOT NULL,
	`index` integer NOT NULL,
	`base_repo_id` integer NOT NULL,
	`base_branch` text NOT NULL,
	`head_repo_id` integer NOT NULL,
	`head_branch` text NOT NULL,
	`head_sha` text DEFAULT '' NOT NULL,
	`base_sha` text DEFAULT '' NOT NULL,
	`merge_base` text DEFAULT '' NOT NULL,
	`status` text DEFAULT 'checking' NOT NULL,
	`conflicted_files` text DEFAULT '[]' NOT NULL,
	`check_seq` integer DEFAULT 0 NOT NULL,
	`checked_seq` integer DEFAULT 0 NOT NULL,
	`check_actor_id` integer DEFAULT 0 NOT NULL,
	`has_merged` integer DEFAULT false NOT NULL,
	`merged_unix` integer DEFAULT 0 NOT NULL,
	`merged_by_id` integer DEFAULT 0 NOT NULL,
	`merge_commit_sha` text DEFAULT '' NOT NULL,
	`merge_intent` text,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pull_requests_issue_uq` ON `pull_requests` (`issue_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `pull_requests_base_index_uq` ON `pull_requests` (`base_repo_id`,`index`);--> statement-breakpoint
CREATE INDEX `pull_requests_base_branch_idx` ON `pull_requests` (`base_repo_id`,`base_branch`);--> statement-breakpoint
CREATE INDEX `pull_requests_head_branch_idx` ON `pull_requests` (`head_repo_id`,`head_branch`);--> statement-breakpoint
CREATE INDEX `pull_requests_queue_idx` ON `pull_requests` (`id`) WHERE check_seq > checked_seq;--> statement-breakpoint
CREATE TABLE `attachments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uuid` text NOT NULL,
	`repo_id` integer NOT NULL,
	`release_id` integer NOT NULL,
	`uploader_id` integer NOT NULL,
	`name` text NOT NULL,
	`size` integer NOT NULL,
	`download_count` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`release_id`) REFERENCES `releases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `attachments_uuid_uq` ON `attachments` (`uuid`);--> statement-breakpoint
CREATE UNIQUE INDEX `attachments_release_name_uq` ON `attachments` (`release_id`,`name`);--> statement-breakpoint
CREATE INDEX `attachments_repo_idx` ON `attachments` (`repo_id`);--> statement-breakpoint
CREATE TABLE `releases` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`publisher_id` integer NOT NULL,
	`tag_name` text NOT NULL,
	`lower_tag_name` text NOT NULL,
	`target` text DEFAULT '' NOT NULL,
	`title` text DEFAULT '' NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`is_draft` integer DEFAULT false NOT NULL,
	`is_prerelease` integer DEFAULT false NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `releases_repo_tag_uq` ON `releases` (`repo_id`,`lower_tag_name`);--> statement-breakpoint
CREATE INDEX `releases_repo_created_idx` ON `releases` (`repo_id`,`created_unix`,`id`);--> statement-breakpoint
CREATE TABLE `hook_tasks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`hook_id` integer NOT NULL,
	`repo_id` integer NOT NULL,
	`uuid` text NOT NULL,
	`event_id` integer DEFAULT 0 NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`is_delivered` integer DEFAULT false NOT NULL,
	`is_succeed` integer DEFAULT false NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_ms` integer DEFAULT 0 NOT NULL,
	`delivered_ms` integer DEFAULT 0 NOT NULL,
	`duration_ms` integer DEFAULT 0 NOT NULL,
	`request_content` text DEFAULT '' NOT NULL,
	`response_content` text DEFAULT '' NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`hook_id`) REFERENCES `hooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `hook_tasks_uuid_uq` ON `hook_tasks` (`uuid`);--> statement-breakpoint
CREATE INDEX `hook_tasks_hook_idx` ON `hook_tasks` (`hook_id`,`id`);--> statement-breakpoint
CREATE INDEX `hook_tasks_pending_idx` ON `hook_tasks` (`is_delivered`,`repo_id`,`hook_id`,`id`);--> statement-breakpoint
CREATE TABLE `hooks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer,
	`owner_id` integer,
	`type` text NOT NULL,
	`url` text NOT NULL,
	`content_type` text DEFAULT 'json' NOT NULL,
	`secret` text DEFAULT '' NOT NULL,
	`authorization_header` text DEFAULT '' NOT NULL,
	`meta` text DEFAULT '{}' NOT NULL,
	`event_mode` text DEFAULT 'choose_events' NOT NULL,
	`events` text DEFAULT '["push"]' NOT NULL,
	`branch_filter` text DEFAULT '' NOT NULL,
	`is_active` integer DEFAULT false NOT NULL,
	`last_status` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `hooks_repo_idx` ON `hooks` (`repo_id`);--> statement-breakpoint
CREATE INDEX `hooks_owner_idx` ON `hooks` (`owner_id`);--> statement-breakpoint
ALTER TABLE `repositories` ADD `num_releases` integer DEFAULT 0 NOT NULL;