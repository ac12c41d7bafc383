CREATE TABLE `oauth2_applications` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`name` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_hash` text NOT NULL,
	`confidential_client` integer DEFAULT true NOT NULL,
	`skip_secondary_authorization` integer DEFAULT false NOT NULL,
	`redirect_uris` text DEFAULT '[]' NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_applications_client_id_uq` ON `oauth2_applications` (`client_id`);--> statement-breakpoint
CREATE INDEX `oauth2_applications_user_idx` ON `oauth2_applications` (`user_id`);--> statement-breakpoint
CREATE TABLE `oauth2_authorization_codes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`grant_id` integer NOT NULL,
	`code_hash` text NOT NULL,
	`code_challenge` text DEFAULT '' NOT NULL,
	`code_challenge_method` text DEFAULT '' NOT NULL,
	`redirect_uri` text NOT NULL,
	`nonce` text DEFAULT '' NOT NULL,
	`used` integer DEFAULT false NOT NULL,
	`expires_unix` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `oauth2_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_codes_hash_uq` ON `oauth2_authorization_codes` (`code_hash`);--> statement-breakpoint
CREATE INDEX `oauth2_codes_grant_idx` ON `oauth2_authorization_codes` (`grant_id`);--> statement-breakpoint
CREATE INDEX `oauth2_codes_expires_idx` ON `oauth2_authorization_codes` (`expires_unix`);--> statement-breakpoint
CREATE TABLE `oauth2_grants` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`application_id` integer NOT NULL,
	`scope` text DEFAULT '' NOT NULL,
	`token_scope` text DEFAULT 'all' NOT NULL,
	`created_unix` integer NOT NULL,
	`updated_unix` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`application_id`) REFERENCES `oauth2_applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_grants_user_app_uq` ON `oauth2_grants` (`user_id`,`application_id`);--> statement-breakpoint
CREATE INDEX `oauth2_grants_app_idx` ON `oauth2_grants` (`application_id`);--> statement-breakpoint
CREATE TABLE `oauth2_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`grant_id` integer NOT NULL,
	`kind` text NOT NULL,
	`token_hash` text NOT NULL,
	`used` integer DEFAULT false NOT NULL,
	`created_unix` integer NOT NULL,
	`expires_unix` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `oauth2_grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth2_tokens_hash_uq` ON `oauth2_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `oauth2_tokens_grant_idx` ON `oauth2_tokens` (`grant_id`);--> statement-breakpoint
CREATE INDEX `oauth2_tokens_expires_idx` ON `oauth2_tokens` (`expires_unix`);