ALTER TABLE "packages" ADD COLUMN "repo_id" bigint;--> statement-breakpoint
ALTER TABLE "repositories" ADD COLUMN "has_packages" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "packages" ADD CONSTRAINT "packages_repo_id_repositories_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repositories"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "package_versions_package_created_idx" ON "package_versions" USING btree ("package_id","created_unix","id");--> statement-breakpoint
CREATE INDEX "packages_repo_idx" ON "packages" USING btree ("repo_id");