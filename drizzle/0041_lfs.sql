CREATE TABLE `lfs_locks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`owner_id` integer NOT NULL,
	`path` text NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lfs_locks_repo_path_uq` ON `lfs_locks` (`repo_id`,`path`);--> statement-breakpoint
CREATE TABLE `lfs_meta_objects` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`oid` text NOT NULL,
	`size` integer NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lfs_meta_objects_repo_oid_uq` ON `lfs_meta_objects` (`repo_id`,`oid`);--> statement-breakpoint
CREATE INDEX `lfs_meta_objects_oid_idx` ON `lfs_meta_objects` (`oid`);