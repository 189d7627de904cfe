-- The priority whose targets a ticket's SLA clocks count against, kept only
-- when it differs from the ticket's own: its priority moved (an escalation
-- makes it URGENT) to one its policy sets no targets for, so the clocks run
-- on under the targets they had. NULL: the ticket's own priority.
ALTER TABLE tickets ADD COLUMN sla_priority TEXT;
