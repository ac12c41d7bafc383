CREATE TABLE `package_files` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`version_id` integer NOT NULL,
	`name` text NOT NULL,
	`lower_name` text NOT NULL,
	`size` integer NOT NULL,
	`md5` text NOT NULL,
	`sha1` text NOT NULL,
	`sha256` text NOT NULL,
	`sha512` text NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`version_id`) REFERENCES `package_versions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `package_files_version_name_uq` ON `package_files` (`version_id`,`lower_name`);--> statement-breakpoint
CREATE INDEX `package_files_sha256_idx` ON `package_files` (`sha256`);--> statement-breakpoint
CREATE TABLE `package_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`package_id` integer NOT NULL,
	`owner_id` integer NOT NULL,
	`creator_id` integer NOT NULL,
	`version` text NOT NULL,
	`lower_version` text NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`package_id`) REFERENCES `packages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `package_versions_package_version_uq` ON `package_versions` (`package_id`,`lower_version`);--> statement-breakpoint
CREATE INDEX `package_versions_owner_created_idx` ON `package_versions` (`owner_id`,`created_unix`,`id`);--> statement-breakpoint
CREATE TABLE `packages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner_id` integer NOT NULL,
	`type` text NOT NULL,
	`name` text NOT NULL,
	`lower_name` text NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `packages_owner_type_name_uq` ON `packages` (`owner_id`,`type`,`lower_name`);