#!/usr/bin/env bash
# Generates the migration for schema changes (drizzle-kit). Serialised with flock so that two
# people (or helpers) changing src/db/schema at once do not write the same migration number.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 9>/tmp/warren-db-generate.lock
flock 9
exec node_modules/.bin/drizzle-kit generate --config drizzle.config.ts "$@"
