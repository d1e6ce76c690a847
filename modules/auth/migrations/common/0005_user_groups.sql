-- Which resource is which user group, fixed when the group is made: rights
-- follow from this row, never from the resource's unique name, which whoever
-- may edit the resource could change (rename `acl_user_group_administrators`
-- away and another group to it). Made from the names the groups have now.
CREATE TABLE auth_user_group (
    rsc_id BIGINT PRIMARY KEY REFERENCES rsc (id) ON DELETE CASCADE,
    name TEXT NOT NULL UNIQUE
);
INSERT INTO auth_user_group (rsc_id, name)
    SELECT r.id, substr(r.name, 16)
    FROM rsc r JOIN rsc c ON c.id = r.category_id
    WHERE c.name = 'acl_user_group' AND r.name LIKE 'acl\_user\_group\_%' ESCAPE '\';
