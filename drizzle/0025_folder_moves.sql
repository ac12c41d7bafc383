CREATE TABLE `folder_moves` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`from_path` text NOT NULL,
	`to_path` text NOT NULL,
	`created_unix` integer NOT NULL
);
