//! The team limit of a tenant (`Visibility`), bound by the query builder as
//! the tenant is: a statement that reads team-owned records narrows them
//! with one of these calls, and a tenant that sees every record adds
//! nothing to its text. Which tables are team-owned, and how a comment, a
//! message or an attachment reaches its team, is said here once.

use vocab::tenant::{Tenant, Visibility};

use crate::Query;

/// A kind of record that belongs to a team, directly (its row has
/// `team_id`) or through the record it is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamOwned {
    Ticket,
    /// A ticket's comment: its ticket's team.
    Comment,
    ChatSession,
    /// A chat message: its session's team.
    ChatMessage,
}

impl TeamOwned {
    /// The ids of this kind whose team is one of `teams` (a subquery of
    /// team ids).
    fn ids_in(self, teams: &str) -> String {
        match self {
            TeamOwned::Ticket => {
                format!("SELECT vt.id FROM tickets vt WHERE vt.team_id IN ({teams})")
            }
            TeamOwned::Comment => format!(
                "SELECT vc.id FROM ticket_comments vc JOIN tickets vt ON vt.id = vc.ticket_id \
                 WHERE vt.team_id IN ({teams})"
            ),
            TeamOwned::ChatSession => {
                format!("SELECT vs.id FROM chat_sessions vs WHERE vs.team_id IN ({teams})")
            }
            TeamOwned::ChatMessage => format!(
                "SELECT vm.id FROM chat_messages vm JOIN chat_sessions vs ON vs.id = vm.session_id \
                 WHERE vs.team_id IN ({teams})"
            ),
        }
    }
}

impl Query {
    /// The subquery of the teams `tenant` is limited to, its member bound
    /// here; None when it sees every record.
    fn teams_of(&mut self, tenant: &Tenant) -> Option<String> {
        self.teams_seen_by(tenant.visibility)
    }

    /// `teams_of` for a visibility read apart from its tenant.
    fn teams_seen_by(&mut self, visibility: Visibility) -> Option<String> {
        match visibility {
            Visibility::All => None,
            Visibility::TeamsOf { member } => {
                let member = self.placeholder_for(member);
                Some(format!(
                    "SELECT vm_t.team_id FROM team_members vm_t WHERE vm_t.user_id = {member}"
                ))
            }
        }
    }

    /// `push_tenant` for a table whose rows carry their team (tickets, chat
    /// sessions: `team_column`, qualified by `alias` when given), narrowed
    /// to the rows of the tenant's teams when it is limited to them. A row
    /// in no team is then not matched.
    pub fn push_tenant_in_teams(self, tenant: &Tenant, alias: &str, team_column: &str) -> Self {
        let column = match alias {
            "" => team_column.to_string(),
            alias => format!("{alias}.{team_column}"),
        };
        self.push_tenant(tenant, alias).push_teams(tenant, &column)
    }

    /// ` AND column IN (the tenant's teams)` when the tenant is limited to
    /// teams; nothing otherwise.
    pub fn push_teams(mut self, tenant: &Tenant, column: &str) -> Self {
        match self.teams_of(tenant) {
            Some(teams) => self.push(&format!(" AND {column} IN ({teams})")),
            None => self,
        }
    }

    /// ` AND (column IS NULL OR column IN (the ids of `owned` records in
    /// the tenant's teams))` when the tenant is limited to teams: for a
    /// column that may name such a record (an attachment's owner).
    pub fn push_visible_or_none(mut self, tenant: &Tenant, owned: TeamOwned, column: &str) -> Self {
        match self.teams_of(tenant) {
            Some(teams) => {
                let ids = owned.ids_in(&teams);
                self.push(&format!(" AND ({column} IS NULL OR {column} IN ({ids}))"))
            }
            None => self,
        }
    }

    /// ` AND NOT (kind_test AND id_column NOT IN (the ids of `owned`
    /// records in the tenant's teams))` when the tenant is limited to
    /// teams: rows whose `kind_test` holds (a change-feed entry of that
    /// record type) are kept only for a record the tenant sees, other rows
    /// are kept.
    pub fn push_visible_when(
        mut self,
        tenant: &Tenant,
        kind_test: &str,
        owned: TeamOwned,
        id_column: &str,
    ) -> Self {
        match self.teams_of(tenant) {
            Some(teams) => {
                let ids = owned.ids_in(&teams);
                self.push(&format!(
                    " AND NOT ({kind_test} AND {id_column} NOT IN ({ids}))"
                ))
            }
            None => self,
        }
    }
}

impl Query {
    /// ` AND (kind_1 AND id_column IN (ids_1) OR …)` when `visibility` is
    /// limited to teams: a row is kept only when one of `kinds` (a test of
    /// the row's kind, and the team-owned records it names) holds and
    /// names a record of the caller's teams, so a row naming no team-owned
    /// record, or one since deleted, is not matched; nothing otherwise.
    pub fn push_only_visible(
        mut self,
        visibility: Visibility,
        kinds: &[(&str, TeamOwned)],
        id_column: &str,
    ) -> Self {
        let Some(teams) = self.teams_seen_by(visibility) else {
            return self;
        };
        let any = kinds
            .iter()
            .map(|(kind_test, owned)| {
                format!(
                    "({kind_test} AND {id_column} IN ({}))",
                    owned.ids_in(&teams)
                )
            })
            .collect::<Vec<_>>()
            .join(" OR ");
        match any.as_str() {
            "" => self.push(" AND 1 = 0"),
            any => self.push(&format!(" AND ({any})")),
        }
    }
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;
    use vocab::tenant::{Mode, Tenant, Visibility};

    use super::TeamOwned;
    use crate::Query;

    #[test]
    fn a_tenant_that_sees_everything_adds_no_condition() {
        let tenant = Tenant::new(Uuid::now_v7(), Mode::Test);
        let query = Query::new("SELECT 1 FROM tickets t WHERE ")
            .push_tenant_in_teams(&tenant, "t", "team_id")
            .push_visible_or_none(&tenant, TeamOwned::Ticket, "a.ticket_id");
        assert_eq!(
            query.sql(),
            "SELECT 1 FROM tickets t WHERE t.company_id = $1 AND t.mode = $2"
        );
    }

    #[test]
    fn a_tenant_limited_to_teams_binds_its_member_after_the_tenant() {
        let tenant = Tenant {
            visibility: Visibility::TeamsOf {
                member: Uuid::now_v7(),
            },
            ..Tenant::new(Uuid::now_v7(), Mode::Test)
        };
        let query = Query::new("SELECT 1 FROM tickets t WHERE ")
            .push_tenant_in_teams(&tenant, "t", "team_id");
        assert_eq!(
            query.sql(),
            "SELECT 1 FROM tickets t WHERE t.company_id = $1 AND t.mode = $2 AND t.team_id IN \
             (SELECT vm_t.team_id FROM team_members vm_t WHERE vm_t.user_id = $3)"
        );
    }
}
