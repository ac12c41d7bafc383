PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_comments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` integer DEFAULT 0 NOT NULL,
	`poster_id` integer NOT NULL,
	`issue_id` integer NOT NULL,
	`repo_id` integer NOT NULL,
	`content` text DEFAULT '' NOT NULL,
	`meta` text DEFAULT '{}' NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_comments`("id", "type", "poster_id", "issue_id", "repo_id", "content", "meta", "created_unix", "updated_unix") SELECT "id", "type", "poster_id", "issue_id", "repo_id", "content", "meta", "created_unix", "updated_unix" FROM `comments`;--> statement-breakpoint
DROP TABLE `comments`;--> statement-breakpoint
ALTER TABLE `__new_comments` RENAME TO `comments`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `comments_issue_idx` ON `comments` (`issue_id`,`type`,`created_unix`);--> statement-breakpoint
CREATE INDEX `comments_repo_idx` ON `comments` (`repo_id`,`type`,`updated_unix`);--> statement-breakpoint
CREATE TABLE `__new_issues` (
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
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_issues`("id", "repo_id", "index", "poster_id", "title", "content", "milestone_id", "is_closed", "is_pull", "is_locked", "num_comments", "deadline_unix", "created_unix", "updated_unix", "closed_unix") SELECT "id", "repo_id", "index", "poster_id", "title", "content", "milestone_id", "is_closed", "is_pull", "is_locked", "num_comments", "deadline_unix", "created_unix", "updated_unix", "closed_unix" FROM `issues`;--> statement-breakpoint
DROP TABLE `issues`;--> statement-breakpoint
ALTER TABLE `__new_issues` RENAME TO `issues`;--> statement-breakpoint
CREATE UNIQUE INDEX `issues_repo_index_uq` ON `issues` (`repo_id`,`index`);--> statement-breakpoint
CREATE INDEX `issues_repo_state_idx` ON `issues` (`repo_id`,`is_closed`,`created_unix`);--> statement-breakpoint
CREATE INDEX `issues_poster_idx` ON `issues` (`poster_id`);--> statement-breakpoint
CREATE INDEX `issues_milestone_idx` ON `issues` (`milestone_id`);