//! The keyset condition of a cursor page.

use super::cursor::After;
use crate::db::Query;

/// The direction of a `(created_at, id)` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    NewestFirst,
    OldestFirst,
}

/// ` AND (created_at, id) < ($x, $y)` (`>` oldest first) with the columns
/// of `alias` (`""` for none): one row-value comparison, which both
/// backends turn into a range of the `(…, created_at, id)` index that
/// serves the first page, so a cursor page costs what the first page does.
pub fn push_after(query: Query, alias: &str, after: Option<&After>, order: Order) -> Query {
    let Some(after) = after else {
        return query;
    };
    let dot = if alias.is_empty() { "" } else { "." };
    let op = match order {
        Order::NewestFirst => "<",
        Order::OldestFirst => ">",
    };
    query
        .push(&format!(
            " AND ({alias}{dot}created_at, {alias}{dot}id) {op} ("
        ))
        .push_bind(after.created_at)
        .push(", ")
        .push_bind(after.id)
        .push(")")
}
