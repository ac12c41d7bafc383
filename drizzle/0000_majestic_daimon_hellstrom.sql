CREATE TABLE `access_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_last_eight` text NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `access_tokens_hash_uq` ON `access_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `access_tokens_user_idx` ON `access_tokens` (`user_id`);--> statement-breakpoint
CREATE TABLE `email_addresses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`email` text NOT NULL,
	`lower_email` text NOT NULL,
	`is_primary` integer DEFAULT false NOT NULL,
	`is_activated` integer DEFAULT true NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `email_addresses_lower_email_uq` ON `email_addresses` (`lower_email`);--> statement-breakpoint
CREATE INDEX `email_addresses_user_idx` ON `email_addresses` (`user_id`);--> statement-breakpoint
CREATE TABLE `follows` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`follow_id` integer NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`follow_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `follows_pair_uq` ON `follows` (`user_id`,`follow_id`);--> statement-breakpoint
CREATE INDEX `follows_follow_idx` ON `follows` (`follow_id`);--> statement-breakpoint
CREATE TABLE `gpg_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner_id` integer NOT NULL,
	`key_id` text NOT NULL,
	`primary_key_id` text DEFAULT '' NOT NULL,
	`content` text NOT NULL,
	`emails` text DEFAULT '[]' NOT NULL,
	`can_sign` integer DEFAULT false NOT NULL,
	`can_encrypt_comms` integer DEFAULT false NOT NULL,
	`can_encrypt_storage` integer DEFAULT false NOT NULL,
	`can_certify` integer DEFAULT false NOT NULL,
	`created_unix` integer NOT NULL,
	`expired_unix` integer DEFAULT 0 NOT NULL,
	`added_unix` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `gpg_keys_owner_idx` ON `gpg_keys` (`owner_id`);--> statement-breakpoint
CREATE INDEX `gpg_keys_key_id_idx` ON `gpg_keys` (`key_id`);--> statement-breakpoint
CREATE TABLE `public_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner_id` integer NOT NULL,
	`name` text NOT NULL,
	`fingerprint` text NOT NULL,
	`content` text NOT NULL,
	`key_type` text NOT NULL,
	`type` integer DEFAULT 1 NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `public_keys_owner_idx` ON `public_keys` (`owner_id`);--> statement-breakpoint
CREATE INDEX `public_keys_fingerprint_idx` ON `public_keys` (`fingerprint`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`lower_name` text NOT NULL,
	`full_name` text DEFAULT '' NOT NULL,
	`email` text DEFAULT '' NOT NULL,
	`keep_email_private` integer DEFAULT false NOT NULL,
	`password_hash` text DEFAULT '' NOT NULL,
	`type` integer DEFAULT 0 NOT NULL,
	`is_admin` integer DEFAULT false NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`prohibit_login` integer DEFAULT false NOT NULL,
	`must_change_password` integer DEFAULT false NOT NULL,
	`allow_git_hook` integer DEFAULT false NOT NULL,
	`allow_import_local` integer DEFAULT false NOT NULL,
	`allow_create_organization` integer DEFAULT true NOT NULL,
	`max_repo_creation` integer DEFAULT -1 NOT NULL,
	`login_name` text DEFAULT '' NOT NULL,
	`source_id` integer DEFAULT 0 NOT NULL,
	`location` text DEFAULT '' NOT NULL,
	`website` text DEFAULT '' NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`language` text DEFAULT '' NOT NULL,
	`visibility` text DEFAULT 'public' NOT NULL,
	`repo_admin_change_team_access` integer DEFAULT false NOT NULL,
	`num_followers` integer DEFAULT 0 NOT NULL,
	`num_following` integer DEFAULT 0 NOT NULL,
	`num_stars` integer DEFAULT 0 NOT NULL,
	`num_repos` integer DEFAULT 0 NOT NULL,
	`num_teams` integer DEFAULT 0 NOT NULL,
	`num_members` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	`last_login_unix` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_lower_name_uq` ON `users` (`lower_name`);--> statement-breakpoint
CREATE INDEX `users_type_idx` ON `users` (`type`,`lower_name`);--> statement-breakpoint
CREATE TABLE `collaborations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`mode` integer DEFAULT 2 NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `collaborations_pair_uq` ON `collaborations` (`repo_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `collaborations_user_idx` ON `collaborations` (`user_id`);--> statement-breakpoint
CREATE TABLE `repositories` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner_id` integer NOT NULL,
	`owner_name` text NOT NULL,
	`name` text NOT NULL,
	`lower_name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`website` text DEFAULT '' NOT NULL,
	`default_branch` text DEFAULT '' NOT NULL,
	`is_private` integer DEFAULT false NOT NULL,
	`is_empty` integer DEFAULT true NOT NULL,
	`is_fork` integer DEFAULT false NOT NULL,
	`fork_id` integer DEFAULT 0 NOT NULL,
	`is_mirror` integer DEFAULT false NOT NULL,
	`is_archived` integer DEFAULT false NOT NULL,
	`size` integer DEFAULT 0 NOT NULL,
	`num_stars` integer DEFAULT 0 NOT NULL,
	`num_forks` integer DEFAULT 0 NOT NULL,
	`num_watches` integer DEFAULT 0 NOT NULL,
	`num_issues` integer DEFAULT 0 NOT NULL,
	`num_closed_issues` integer DEFAULT 0 NOT NULL,
	`num_pulls` integer DEFAULT 0 NOT NULL,
	`num_closed_pulls` integer DEFAULT 0 NOT NULL,
	`num_milestones` integer DEFAULT 0 NOT NULL,
	`num_closed_milestones` integer DEFAULT 0 NOT NULL,
	`has_issues` integer DEFAULT true NOT NULL,
	`has_wiki` integer DEFAULT true NOT NULL,
	`has_pull_requests` integer DEFAULT true NOT NULL,
	`enable_time_tracker` integer DEFAULT true NOT NULL,
	`allow_only_contributors_to_track_time` integer DEFAULT true NOT NULL,
	`ignore_whitespace_conflicts` integer DEFAULT false NOT NULL,
	`allow_merge_commits` integer DEFAULT true NOT NULL,
	`allow_rebase` integer DEFAULT true NOT NULL,
	`allow_rebase_explicit` integer DEFAULT true NOT NULL,
	`allow_squash_merge` integer DEFAULT true NOT NULL,
	`status` text DEFAULT 'ready' NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `repositories_owner_name_uq` ON `repositories` (`owner_id`,`lower_name`);--> statement-breakpoint
CREATE INDEX `repositories_lower_name_idx` ON `repositories` (`lower_name`);--> statement-breakpoint
CREATE INDEX `repositories_private_idx` ON `repositories` (`is_private`,`lower_name`);--> statement-breakpoint
CREATE TABLE `stars` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`repo_id` integer NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `stars_pair_uq` ON `stars` (`user_id`,`repo_id`);--> statement-breakpoint
CREATE INDEX `stars_repo_idx` ON `stars` (`repo_id`);--> statement-breakpoint
CREATE TABLE `watches` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`repo_id` integer NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `watches_pair_uq` ON `watches` (`user_id`,`repo_id`);--> statement-breakpoint
CREATE INDEX `watches_repo_idx` ON `watches` (`repo_id`);--> statement-breakpoint
CREATE TABLE `org_users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`org_id` integer NOT NULL,
	`is_public` integer DEFAULT false NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `org_users_pair_uq` ON `org_users` (`uid`,`org_id`);--> statement-breakpoint
CREATE INDEX `org_users_org_idx` ON `org_users` (`org_id`);--> statement-breakpoint
CREATE TABLE `team_repos` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`team_id` integer NOT NULL,
	`repo_id` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `team_repos_pair_uq` ON `team_repos` (`team_id`,`repo_id`);--> statement-breakpoint
CREATE INDEX `team_repos_repo_idx` ON `team_repos` (`repo_id`);--> statement-breakpoint
CREATE TABLE `team_users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`team_id` integer NOT NULL,
	`uid` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uid`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `team_users_pair_uq` ON `team_users` (`team_id`,`uid`);--> statement-breakpoint
CREATE INDEX `team_users_uid_idx` ON `team_users` (`uid`,`org_id`);--> statement-breakpoint
CREATE TABLE `teams` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`name` text NOT NULL,
	`lower_name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`authorize` integer DEFAULT 1 NOT NULL,
	`units` text DEFAULT '[]' NOT NULL,
	`includes_all_repositories` integer DEFAULT false NOT NULL,
	`can_create_org_repo` integer DEFAULT false NOT NULL,
	`num_repos` integer DEFAULT 0 NOT NULL,
	`num_members` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `teams_org_name_uq` ON `teams` (`org_id`,`lower_name`);--> statement-breakpoint
CREATE TABLE `comments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` integer DEFAULT 0 NOT NULL,
	`poster_id` integer NOT NULL,
	`issue_id` integer NOT NULL,
	`repo_id` integer NOT NULL,
	`content` text DEFAULT '' NOT NULL,
	`meta` text DEFAULT '{}' NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`poster_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `comments_issue_idx` ON `comments` (`issue_id`,`type`,`created_unix`);--> statement-breakpoint
CREATE INDEX `comments_repo_idx` ON `comments` (`repo_id`,`type`,`updated_unix`);--> statement-breakpoint
CREATE TABLE `issue_assignees` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`issue_id` integer NOT NULL,
	`assignee_id` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`assignee_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `issue_assignees_pair_uq` ON `issue_assignees` (`issue_id`,`assignee_id`);--> statement-breakpoint
CREATE INDEX `issue_assignees_user_idx` ON `issue_assignees` (`assignee_id`);--> statement-breakpoint
CREATE TABLE `issue_indexes` (
	`repo_id` integer PRIMARY KEY NOT NULL,
	`max_index` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `issue_labels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`issue_id` integer NOT NULL,
	`label_id` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`label_id`) REFERENCES `labels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `issue_labels_pair_uq` ON `issue_labels` (`issue_id`,`label_id`);--> statement-breakpoint
CREATE INDEX `issue_labels_label_idx` ON `issue_labels` (`label_id`);--> statement-breakpoint
CREATE TABLE `issues` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`index` integer NOT NULL,
	`poster_id` integer NOT NULL,
	`title` text NOT NULL,
	`content` text DEFAULT '' NOT NULL,
	`milestone_id` integer DEFAULT 0 NOT NULL,
	`is_closed` integer DEFAULT false NOT NULL,
	`is_pull` integer DEFAULT false NOT NULL,
	`is_locked` integer DEFAULT false NOT NULL,
	`num_comments` integer DEFAULT 0 NOT NULL,
	`deadline_unix` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	`closed_unix` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`poster_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `issues_repo_index_uq` ON `issues` (`repo_id`,`index`);--> statement-breakpoint
CREATE INDEX `issues_repo_state_idx` ON `issues` (`repo_id`,`is_closed`,`created_unix`);--> statement-breakpoint
CREATE INDEX `issues_poster_idx` ON `issues` (`poster_id`);--> statement-breakpoint
CREATE INDEX `issues_milestone_idx` ON `issues` (`milestone_id`);--> statement-breakpoint
CREATE TABLE `labels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`name` text NOT NULL,
	`color` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`num_issues` integer DEFAULT 0 NOT NULL,
	`num_closed_issues` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `labels_repo_idx` ON `labels` (`repo_id`,`name`);--> statement-breakpoint
CREATE TABLE `milestones` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`name` text NOT NULL,
	`content` text DEFAULT '' NOT NULL,
	`is_closed` integer DEFAULT false NOT NULL,
	`num_issues` integer DEFAULT 0 NOT NULL,
	`num_closed_issues` integer DEFAULT 0 NOT NULL,
	`deadline_unix` integer DEFAULT 0 NOT NULL,
	`closed_unix` integer DEFAULT 0 NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `milestones_repo_idx` ON `milestones` (`repo_id`,`is_closed`);--> statement-breakpoint
CREATE TABLE `tracked_times` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`issue_id` integer NOT NULL,
	`repo_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`time` integer NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `tracked_times_issue_idx` ON `tracked_times` (`issue_id`);--> statement-breakpoint
CREATE INDEX `tracked_times_repo_user_idx` ON `tracked_times` (`repo_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `tracked_times_user_idx` ON `tracked_times` (`user_id`);