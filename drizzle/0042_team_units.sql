CREATE TABLE `team_units` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`team_id` integer NOT NULL,
	`type` text NOT NULL,
	`access_mode` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `team_units_team_type_uq` ON `team_units` (`team_id`,`type`);