#!/usr/bin/env bash
# Generates the migrations for schema changes (drizzle-kit), for both databases from the one schema
# (src/db/schema): SQLite into drizzle/, PostgreSQL (the tables src/db/pg-schema.ts derives) into
# drizzle-pg/. Serialised with flock so that two people (or helpers) changing src/db/schema at once
# do not write the same migration number. Arguments (e.g. --name) go to both.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 9>/tmp/warren-db-generate.lock
flock 9
node_modules/.bin/drizzle-kit generate --config drizzle.config.ts "$@"
node_modules/.bin/drizzle-kit generate --config drizzle.pg.config.ts "$@"
