CREATE TABLE `issue_dependencies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`issue_id` integer NOT NULL,
	`dependency_id` integer NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`dependency_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `issue_dependencies_pair_uq` ON `issue_dependencies` (`issue_id`,`dependency_id`);--> statement-breakpoint
CREATE INDEX `issue_dependencies_dependency_idx` ON `issue_dependencies` (`dependency_id`);--> statement-breakpoint
ALTER TABLE `repositories` ADD `enable_issue_dependencies` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `issues` ADD `pin_order` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `issues_repo_pin_idx` ON `issues` (`repo_id`,`is_pull`,`pin_order`);