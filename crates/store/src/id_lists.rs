//! Statements over the rows that point at a set of records, a column per
//! kind of record: a person's tickets (`ticket_id`) and chat sessions
//! (`chat_session_id`) in each area's table, when an erasure or an export
//! walks them. Each list goes in chunks, so no statement binds more ids
//! than a backend takes, and every statement keeps to the tenant's rows.

use uuid::Uuid;
use vocab::error::StoreError;
use vocab::tenant::Tenant;

use crate::{Query, Tx};

/// Most ids one statement binds (SQLite takes 32 766 values, Postgres
/// 65 535).
const CHUNK: usize = 500;

/// Lists of ids, each with the column that names them.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct IdLists<'a> {
    lists: Vec<(&'static str, &'a [Uuid])>,
}

impl<'a> IdLists<'a> {
    /// The rows whose `column` is one of `ids`.
    pub fn of(column: &'static str, ids: &'a [Uuid]) -> Self {
        IdLists::default().and(column, ids)
    }

    /// A person's tickets and chat sessions, as a table that points at
    /// either names them.
    pub fn tickets_and_chats(tickets: &'a [Uuid], sessions: &'a [Uuid]) -> Self {
        IdLists::of("ticket_id", tickets).and("chat_session_id", sessions)
    }

    /// Also the rows whose `column` is one of `ids`.
    pub fn and(mut self, column: &'static str, ids: &'a [Uuid]) -> Self {
        self.lists.push((column, ids));
        self
    }

    /// `head` (a statement whose condition goes on, e.g. `DELETE FROM t
    /// WHERE `) completed once per chunk of each list: `alias.column IN
    /// (…) AND` the tenant of `alias` (no alias: `""`). None for empty
    /// lists.
    pub fn statements(&self, head: &Query, tenant: &Tenant, alias: &str) -> Vec<Query> {
        let prefix = match alias {
            "" => String::new(),
            alias => format!("{alias}."),
        };
        let mut statements = Vec::new();
        for (column, ids) in &self.lists {
            for chunk in ids.chunks(CHUNK) {
                let statement = head
                    .clone()
                    .push(&format!("{prefix}{column} IN "))
                    .push_bind_list(chunk.iter().copied())
                    .push(" AND ")
                    .push_tenant(tenant, alias);
                statements.push(statement);
            }
        }
        statements
    }

    /// Runs `head`'s statements (`statements`, no alias) in `tx`; answers
    /// how many rows they changed.
    pub async fn rows_affected(
        &self,
        tx: &mut Tx,
        head: &Query,
        tenant: &Tenant,
    ) -> Result<u64, StoreError> {
        let mut done = 0;
        for statement in self.statements(head, tenant, "") {
            done += statement.rows_affected(&mut *tx).await?;
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vocab::tenant::Mode;

    #[test]
    fn each_list_is_its_own_statement_and_an_empty_one_none() {
        let tenant = Tenant::new(Uuid::now_v7(), Mode::Test);
        let tickets = [Uuid::now_v7(), Uuid::now_v7()];
        let lists = IdLists::tickets_and_chats(&tickets, &[]);
        let head = Query::new("DELETE FROM notes WHERE ");
        let sql: Vec<String> = lists
            .statements(&head, &tenant, "n")
            .iter()
            .map(|s| s.sql().to_string())
            .collect();
        assert_eq!(
            sql,
            vec![
                "DELETE FROM notes WHERE n.ticket_id IN ($1, $2) AND n.company_id = $3 \
                 AND n.mode = $4"
            ]
        );
    }

    #[test]
    fn a_long_list_goes_in_chunks() {
        let tenant = Tenant::new(Uuid::now_v7(), Mode::Test);
        let ids: Vec<Uuid> = (0..CHUNK + 1).map(|_| Uuid::now_v7()).collect();
        let head = Query::new("DELETE FROM notes WHERE ");
        let statements = IdLists::of("record_id", &ids).statements(&head, &tenant, "");
        assert_eq!(statements.len(), 2);
    }
}
