-- Each team's units with their own modes (team_units): every unit a team listed at the team's
-- mode, so that no team's access changes. A team listing none, or every unit there was before (the
-- API's default), gets every unit, the projects and packages units added with this change too, as
-- a team made without a list has. Admin and owner teams get every unit at their mode (the external
-- tracker and wiki at read, as Gitea stores them).
INSERT INTO "team_units" ("org_id", "team_id", "type", "access_mode")
SELECT "t"."org_id", "t"."id", "u"."value",
  CASE WHEN "t"."authorize" >= 3 AND "u"."value" IN ('repo.ext_issues', 'repo.ext_wiki') THEN 1 ELSE "t"."authorize" END
FROM "teams" "t" CROSS JOIN LATERAL jsonb_array_elements_text(
  CASE WHEN "t"."authorize" >= 3 OR "t"."units" NOT LIKE '[%' OR jsonb_array_length("t"."units"::jsonb) = 0
      OR CASE WHEN "t"."units" LIKE '[%' THEN (SELECT count(DISTINCT "l"."value") FROM jsonb_array_elements_text("t"."units"::jsonb) AS "l"("value") WHERE "l"."value" IN ('repo.code', 'repo.issues', 'repo.ext_issues', 'repo.wiki', 'repo.pulls', 'repo.releases', 'repo.ext_wiki')) ELSE 0 END = 7
    THEN '["repo.code","repo.issues","repo.ext_issues","repo.wiki","repo.pulls","repo.releases","repo.ext_wiki","repo.projects","repo.packages"]'::jsonb
    ELSE "t"."units"::jsonb END) AS "u"("value")
WHERE "u"."value" IN ('repo.code', 'repo.issues', 'repo.ext_issues', 'repo.wiki', 'repo.pulls', 'repo.releases', 'repo.ext_wiki', 'repo.projects', 'repo.packages')
ON CONFLICT DO NOTHING;
