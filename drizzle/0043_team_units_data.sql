-- Each team's units with their own modes (team_units): every unit a team listed at the team's
-- mode, so that no team's access changes. A team listing none (or a list that does not read), or
-- every unit there was before (the API's default), gets every unit, the projects and packages
-- units added with this change too, as a team made without a list has. Admin and owner teams get
-- every unit at their mode (the external tracker and wiki at read, as Gitea stores them).
INSERT INTO `team_units` (`org_id`, `team_id`, `type`, `access_mode`)
SELECT `t`.`org_id`, `t`.`id`, `u`.`value`,
  CASE WHEN `t`.`authorize` >= 3 AND `u`.`value` IN ('repo.ext_issues', 'repo.ext_wiki') THEN 1 ELSE `t`.`authorize` END
FROM `teams` `t`, json_each(
  CASE WHEN `t`.`authorize` >= 3 OR NOT json_valid(`t`.`units`) OR json_array_length(`t`.`units`) = 0
      OR CASE WHEN json_valid(`t`.`units`) THEN (SELECT count(DISTINCT `l`.`value`) FROM json_each(`t`.`units`) `l` WHERE `l`.`value` IN ('repo.code', 'repo.issues', 'repo.ext_issues', 'repo.wiki', 'repo.pulls', 'repo.releases', 'repo.ext_wiki')) ELSE 0 END = 7
    THEN '["repo.code","repo.issues","repo.ext_issues","repo.wiki","repo.pulls","repo.releases","repo.ext_wiki","repo.projects","repo.packages"]'
    ELSE `t`.`units` END) `u`
WHERE `u`.`type` = 'text'
  AND `u`.`value` IN ('repo.code', 'repo.issues', 'repo.ext_issues', 'repo.wiki', 'repo.pulls', 'repo.releases', 'repo.ext_wiki', 'repo.projects', 'repo.packages')
ON CONFLICT DO NOTHING;
