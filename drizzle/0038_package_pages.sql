ALTER TABLE `repositories` ADD `has_packages` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `packages` ADD `repo_id` integer REFERENCES repositories(id) ON DELETE set null;--> statement-breakpoint
CREATE INDEX `packages_repo_idx` ON `packages` (`repo_id`);--> statement-breakpoint
CREATE INDEX `package_versions_package_created_idx` ON `package_versions` (`package_id`,`created_unix`,`id`);