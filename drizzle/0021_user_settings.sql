ALTER TABLE `users` ADD `theme` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `diff_view_style` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `keep_activity_private` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `events_actor_idx` ON `events` (`actor_id`,`created_unix`);