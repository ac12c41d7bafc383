CREATE TABLE `hook_payloads` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`text` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `hook_tasks` ADD `payload_id` integer REFERENCES hook_payloads(id);--> statement-breakpoint
CREATE INDEX `hook_tasks_payload_idx` ON `hook_tasks` (`payload_id`);