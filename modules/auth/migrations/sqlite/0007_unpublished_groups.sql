-- User groups are not for visitors to read: made unpublished since this
-- version, and those made before are unpublished here (managers, who may
-- change them, still see them).
UPDATE rsc SET is_published = 0 WHERE id IN (SELECT rsc_id FROM auth_user_group);
