-- Forms (docs/forms.md): what visitors sent with a form an editor made.
CREATE TABLE form_submission (
    id BIGSERIAL PRIMARY KEY,
    -- The form: a resource of the category `form`.
    form_id BIGINT NOT NULL REFERENCES rsc (id) ON DELETE CASCADE,
    -- The answers, a JSON object by field name (a file field holds the id
    -- of the media resource the file became).
    answers TEXT NOT NULL,
    -- The person of the logged-on user who sent it, if one did.
    user_id BIGINT REFERENCES rsc (id) ON DELETE SET NULL,
    -- The sender's network (an IPv6 address by its /64).
    address TEXT,
    -- Unix milliseconds.
    created BIGINT NOT NULL
);
CREATE INDEX form_submission_form ON form_submission (form_id, id);
