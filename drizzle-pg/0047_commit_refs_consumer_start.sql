-- The commit-refs consumer (src/modules/issues/commit-refs.ts: issues referenced and closed by
-- pushed commits) starts at the outbox's end on a site that had events before it: the pushes of
-- the past are not read again (they would close issues and add references long after the fact).
-- A new site's outbox is empty: it starts at 0.
INSERT INTO event_consumers (name, done_id, claimed_id, lease_until_ms) SELECT 'commit-refs', COALESCE(MAX(id), 0), COALESCE(MAX(id), 0), 0 FROM events WHERE true ON CONFLICT (name) DO NOTHING;
