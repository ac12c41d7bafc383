-- "Time added" rows were written with comment type 15, which is Gitea's cancel_tracking; Gitea's
-- add_time_manual is 14. Until now nothing else wrote 15, so every such row is a time added.
UPDATE comments SET type = 14 WHERE type = 15;
