CREATE TABLE `branch_protections` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`rule_name` text NOT NULL,
	`priority` integer DEFAULT 0 NOT NULL,
	`can_push` integer DEFAULT false NOT NULL,
	`enable_whitelist` integer DEFAULT false NOT NULL,
	`whitelist_user_ids` text DEFAULT '[]' NOT NULL,
	`whitelist_team_ids` text DEFAULT '[]' NOT NULL,
	`whitelist_deploy_keys` integer DEFAULT false NOT NULL,
	`can_force_push` integer DEFAULT false NOT NULL,
	`enable_force_push_allowlist` integer DEFAULT false NOT NULL,
	`force_push_allowlist_user_ids` text DEFAULT '[]' NOT NULL,
	`force_push_allowlist_team_ids` text DEFAULT '[]' NOT NULL,
	`force_push_allowlist_deploy_keys` integer DEFAULT false NOT NULL,
	`enable_merge_whitelist` integer DEFAULT false NOT NULL,
	`merge_whitelist_user_ids` text DEFAULT '[]' NOT NULL,
	`merge_whitelist_team_ids` text DEFAULT '[]' NOT NULL,
	`enable_status_check` integer DEFAULT false NOT NULL,
	`status_check_contexts` text DEFAULT '[]' NOT NULL,
	`enable_approvals_whitelist` integer DEFAULT false NOT NULL,
	`approvals_whitelist_user_ids` text DEFAULT '[]' NOT NULL,
	`approvals_whitelist_team_ids` text DEFAULT '[]' NOT NULL,
	`required_approvals` integer DEFAULT 0 NOT NULL,
	`block_on_rejected_reviews` integer DEFAULT false NOT NULL,
	`block_on_official_review_requests` integer DEFAULT false NOT NULL,
	`block_on_outdated_branch` integer DEFAULT false NOT NULL,
	`dismiss_stale_approvals` integer DEFAULT false NOT NULL,
	`ignore_stale_approvals` integer DEFAULT false NOT NULL,
	`require_signed_commits` integer DEFAULT false NOT NULL,
	`protected_file_patterns` text DEFAULT '' NOT NULL,
	`unprotected_file_patterns` text DEFAULT '' NOT NULL,
	`block_admin_merge_override` integer DEFAULT false NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `branch_protections_repo_rule_uq` ON `branch_protections` (`repo_id`,`rule_name`);--> statement-breakpoint
CREATE INDEX `branch_protections_repo_idx` ON `branch_protections` (`repo_id`,`priority`);--> statement-breakpoint
CREATE TABLE `tag_protections` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`name_pattern` text NOT NULL,
	`allowlist_user_ids` text DEFAULT '[]' NOT NULL,
	`allowlist_team_ids` text DEFAULT '[]' NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `tag_protections_repo_idx` ON `tag_protections` (`repo_id`);