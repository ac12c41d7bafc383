-- Each team's units with their own modes (team_units): every unit a team listed at the team's
-- mode, so that no team's access changes. A team listing none (or a list that does not read) gets
-- every unit, as a team made without a list has. Admin and owner teams get every unit at their
-- mode (the external tracker and wiki at read, as Gitea stores them).
INSERT INTO `team_units` (`org_id`, `team_id`, `type`, `access_mode`)
SELECT `t`.`org_id`, `t`.`id`, `u`.`value`,
  CASE WHEN `t`.`authorize` >= 3 AND `u`.`value` IN ('repo.ext_issues', 'repo.ext_wiki') THEN 1 ELSE `t`.`authorize` END
FROM `teams` `t`, json_each(
  CASE WHEN `t`.`authorize` >= 3 OR NOT json_valid(`t`.`units`) OR json_array_length(`t`.`units`) = 0
    THEN '["repo.code","repo.issues","repo.ext_issues","repo.wiki","repo.pulls","repo.releases","repo.ext_wiki"]'
    ELSE `t`.`units` END) `u`
WHERE `u`.`type` = 'text'
  AND `u`.`value` IN ('repo.code', 'repo.issues', 'repo.ext_issues', 'repo.wiki', 'repo.pulls', 'repo.releases', 'repo.ext_wiki')
ON CONFLICT DO NOTHING;
