CREATE TABLE `repo_topics` (
	`repo_id` integer NOT NULL,
	`topic_id` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`topic_id`) REFERENCES `topics`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `repo_topics_pair_uq` ON `repo_topics` (`repo_id`,`topic_id`);--> statement-breakpoint
CREATE INDEX `repo_topics_topic_idx` ON `repo_topics` (`topic_id`);--> statement-breakpoint
CREATE TABLE `topics` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`repo_count` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `topics_name_uq` ON `topics` (`name`);--> statement-breakpoint
ALTER TABLE `repositories` ADD `allow_fast_forward_only_merge` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `allow_manual_merge` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `autodetect_manual_merge` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `allow_rebase_update` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `default_merge_style` text DEFAULT 'merge' NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `default_delete_branch_after_merge` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `default_allow_maintainer_edit` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `has_releases` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `external_tracker_url` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `external_tracker_format` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `external_tracker_style` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `external_tracker_regexp_pattern` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `external_wiki_url` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `is_template` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `archived_unix` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `original_url` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `object_format` text DEFAULT 'sha1' NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `topics` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `pull_requests` ADD `allow_maintainer_edit` integer DEFAULT false NOT NULL;