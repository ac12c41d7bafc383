ALTER TABLE `users` ADD `avatar` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `repositories` ADD `avatar` text DEFAULT '' NOT NULL;