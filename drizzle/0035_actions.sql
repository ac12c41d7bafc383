CREATE TABLE `action_runner_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`scope` text NOT NULL,
	`owner_id` integer,
	`repo_id` integer,
	`token_sealed` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_unix` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `action_runner_tokens_scope_idx` ON `action_runner_tokens` (`scope`);--> statement-breakpoint
CREATE UNIQUE INDEX `action_runner_tokens_hash_idx` ON `action_runner_tokens` (`token_hash`);--> statement-breakpoint
CREATE TABLE `action_secrets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`scope` text NOT NULL,
	`owner_id` integer,
	`repo_id` integer,
	`name` text NOT NULL,
	`data_sealed` text NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `action_secrets_scope_name_idx` ON `action_secrets` (`scope`,`name`);--> statement-breakpoint
CREATE TABLE `action_variables` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`scope` text NOT NULL,
	`owner_id` integer,
	`repo_id` integer,
	`name` text NOT NULL,
	`data` text NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repositories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `action_variables_scope_name_idx` ON `action_variables` (`scope`,`name`);