-- Where an answer to a mail goes (a contact form's visitor), when not to the sender.
ALTER TABLE mail_outbox ADD COLUMN reply_to TEXT;
