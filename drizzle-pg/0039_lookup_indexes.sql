DROP INDEX "repositories_private_idx";--> statement-breakpoint
CREATE INDEX "labels_name_idx" ON "labels" USING btree ("name");--> statement-breakpoint
CREATE INDEX "milestones_name_idx" ON "milestones" USING btree ("name");--> statement-breakpoint
CREATE INDEX "notifications_user_updated_idx" ON "notifications" USING btree ("user_id","updated_unix","id");--> statement-breakpoint
CREATE INDEX "pull_requests_merge_commit_idx" ON "pull_requests" USING btree ("base_repo_id","merge_commit_sha");--> statement-breakpoint
CREATE INDEX "pull_requests_head_sha_idx" ON "pull_requests" USING btree ("base_repo_id","head_sha");--> statement-breakpoint
CREATE INDEX "pull_requests_merge_intent_idx" ON "pull_requests" USING btree ("id") WHERE merge_intent is not null;--> statement-breakpoint
CREATE INDEX "repositories_owner_list_idx" ON "repositories" USING btree ("owner_id","status","is_private","lower_name","owner_name");--> statement-breakpoint
CREATE INDEX "repositories_avatar_idx" ON "repositories" USING btree ("avatar");--> statement-breakpoint
CREATE INDEX "users_avatar_idx" ON "users" USING btree ("avatar");