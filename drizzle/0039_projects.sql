CREATE TABLE `project_columns` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`title` text NOT NULL,
	`color` text DEFAULT '' NOT NULL,
	`sorting` integer DEFAULT 0 NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`creator_id` integer NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `project_columns_project_idx` ON `project_columns` (`project_id`,`sorting`,`id`);--> statement-breakpoint
CREATE TABLE `project_issues` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`issue_id` integer NOT NULL,
	`project_id` integer NOT NULL,
	`column_id` integer NOT NULL,
	`sorting` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`column_id`) REFERENCES `project_columns`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `project_issues_issue_uq` ON `project_issues` (`issue_id`);--> statement-breakpoint
CREATE INDEX `project_issues_column_idx` ON `project_issues` (`column_id`,`sorting`,`id`);--> statement-breakpoint
CREATE INDEX `project_issues_project_idx` ON `project_issues` (`project_id`);--> statement-breakpoint
CREATE TABLE `projects` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer,
	`owner_id` integer,
	`type` integer NOT NULL,
	`title` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`template_type` integer DEFAULT 0 NOT NULL,
	`card_type` integer DEFAULT 0 NOT NULL,
	`creator_id` integer NOT NULL,
	`is_closed` integer DEFAULT false NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	`closed_unix` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `projects_repo_idx` ON `projects` (`repo_id`,`is_closed`,`id`);--> statement-breakpoint
CREATE INDEX `projects_owner_idx` ON `projects` (`owner_id`,`is_closed`,`id`);--> statement-breakpoint
ALTER TABLE `repositories` ADD `has_projects` integer DEFAULT true NOT NULL;