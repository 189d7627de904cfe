-- The audit log records more kinds of change (SSO, passwords, SLA policies,
-- business hours, escalation rules, custom fields, entities, widget
-- secrets, deletions, refused sign-ins). Which actions and target types
-- exist is the code's closed set (audit::Action, audit::TargetType), so
-- the table no longer repeats it: each area that records a new kind would
-- otherwise rebuild the table.
ALTER TABLE audit_entries DROP CONSTRAINT IF EXISTS audit_entries_action_check;
ALTER TABLE audit_entries DROP CONSTRAINT IF EXISTS audit_entries_target_type_check;
