//! New rows described once and written one of two ways: as their own
//! `INSERT … VALUES` statement, or as one data-modifying CTE of a Postgres
//! statement that first inserts the record they belong to (a ticket and its
//! timeline entry, SLA clocks and event in one round trip). A side effect of
//! a write (an events row, a timeline entry, a clock) is described by one
//! function of its area, which returns [`NewRows`]; only this module turns
//! the description into SQL, so the two ways cannot drift apart.

use crate::{Query, Value};

/// Rows of one table to insert: the columns, and the values of each row in
/// the columns' order.
#[derive(Debug, Clone)]
#[must_use]
pub struct NewRows {
    table: &'static str,
    columns: String,
    rows: Vec<Vec<Value>>,
    /// Columns every row sets to the same SQL text, after the bound ones:
    /// a time that must be the database's (`Backend::now_sql`), not bound.
    computed: Vec<(&'static str, String)>,
    /// What must hold for the rows to be written at all (`only_if`).
    only_if: Option<Condition>,
}

/// A condition as SQL text whose `{}` stand for `values`, bound in order.
#[derive(Debug, Clone)]
struct Condition {
    sql: &'static str,
    values: Vec<Value>,
}

impl Condition {
    /// `query` followed by ` WHERE` and the condition.
    fn push_where(&self, query: Query) -> Query {
        let mut parts = self.sql.split("{}");
        let mut query = query.push(" WHERE ").push(parts.next().unwrap_or_default());
        for (part, value) in parts.zip(self.values.iter().cloned()) {
            query = query.push_bind(value).push(part);
        }
        query
    }
}

/// The record a CTE's rows follow: the CTE `alias` that inserted it (with
/// `RETURNING` the columns used here), and the one value of its row the
/// new rows' JSON values take, which only the statement knows (the number
/// Postgres reserved for a ticket): every JSON object among the rows'
/// values gets `key` set to the record's `column`.
#[derive(Debug, Clone, Copy)]
pub struct After<'a> {
    pub alias: &'a str,
    pub key: &'a str,
    pub column: &'a str,
}

impl NewRows {
    /// A first row of `table`, whose `columns` are listed as SQL text
    /// (`"id, company_id, mode, …"`): one value per column, in order.
    /// There is always a row (an INSERT of none is not SQL).
    pub fn of(
        table: &'static str,
        columns: impl Into<String>,
        first: impl IntoIterator<Item = Value>,
    ) -> Self {
        NewRows {
            table,
            columns: columns.into(),
            rows: Vec::new(),
            computed: Vec::new(),
            only_if: None,
        }
        .and(first)
    }

    /// Writes the rows only when `sql` holds when they are written (a
    /// condition read in the same statement, so it costs no round trip):
    /// SQL text whose `{}` stand for `values`, in order.
    pub fn only_if(mut self, sql: &'static str, values: impl IntoIterator<Item = Value>) -> Self {
        let values: Vec<Value> = values.into_iter().collect();
        debug_assert_eq!(sql.matches("{}").count(), values.len());
        self.only_if = Some(Condition { sql, values });
        self
    }

    /// Sets `column` of every row to the SQL text `sql` (not a bound value).
    pub fn computed(mut self, column: &'static str, sql: impl Into<String>) -> Self {
        self.computed.push((column, sql.into()));
        self
    }

    /// The column list, the computed columns last.
    fn column_list(&self) -> String {
        let mut list = self.columns.clone();
        for (column, _) in &self.computed {
            list.push_str(", ");
            list.push_str(column);
        }
        list
    }

    /// `, sql, sql…` of the computed columns, as a row ends.
    fn computed_values(&self) -> String {
        self.computed
            .iter()
            .map(|(_, sql)| format!(", {sql}"))
            .collect()
    }

    /// Adds a row: one value per column, in order.
    pub fn and(mut self, values: impl IntoIterator<Item = Value>) -> Self {
        let row: Vec<Value> = values.into_iter().collect();
        debug_assert_eq!(row.len(), self.columns.split(',').count());
        self.rows.push(row);
        self
    }

    /// `INSERT INTO table (columns) VALUES (…), (…)`, the values as given;
    /// with a condition (`only_if`), `SELECT …, … WHERE condition` for each
    /// row, joined by `UNION ALL`.
    #[track_caller]
    pub fn insert(self) -> Query {
        let mut query = Query::new(format!(
            "INSERT INTO {} ({}) ",
            self.table,
            self.column_list()
        ));
        let computed = self.computed_values();
        if let Some(condition) = &self.only_if {
            for (i, row) in self.rows.into_iter().enumerate() {
                query = query.push(if i == 0 {
                    "SELECT "
                } else {
                    " UNION ALL SELECT "
                });
                for (j, value) in row.into_iter().enumerate() {
                    if j > 0 {
                        query = query.push(", ");
                    }
                    query = query.push_bind(value);
                }
                query = condition.push_where(query.push(&computed));
            }
            return query;
        }
        query = query.push("VALUES ");
        for (i, row) in self.rows.into_iter().enumerate() {
            if i > 0 {
                query = query.push(", ");
            }
            if computed.is_empty() {
                query = query.push_bind_list(row);
                continue;
            }
            query = query.push("(");
            for (j, value) in row.into_iter().enumerate() {
                if j > 0 {
                    query = query.push(", ");
                }
                query = query.push_bind(value);
            }
            query = query.push(&format!("{computed})"));
        }
        query
    }

    /// Appends `, name AS (INSERT INTO table (columns) SELECT … FROM
    /// alias UNION ALL …)` to `statement`, which opened `WITH alias AS
    /// (INSERT … RETURNING …)`: each row once per row `alias` inserted (so
    /// none when it inserted none), its JSON objects given the record's
    /// value at `after.key` (Postgres' `jsonb_set`; this form is written
    /// only on Postgres).
    pub fn push_after(self, statement: Query, name: &str, after: After<'_>) -> Query {
        let mut query = statement.push(&format!(
            ", {name} AS (INSERT INTO {} ({}) ",
            self.table,
            self.column_list()
        ));
        let computed = self.computed_values();
        for (i, row) in self.rows.into_iter().enumerate() {
            query = query.push(if i == 0 {
                "SELECT "
            } else {
                " UNION ALL SELECT "
            });
            // A JSON object a row holds twice (an event's data and the
            // feed's snapshot of it) is bound once: a ticket's JSON is the
            // largest value of a create.
            let mut objects: Vec<(serde_json::Value, String)> = Vec::new();
            for (j, value) in row.into_iter().enumerate() {
                if j > 0 {
                    query = query.push(", ");
                }
                query = match value {
                    Value::Json(Some(json)) if json.is_object() => {
                        let bound = objects.iter().find(|(seen, _)| *seen == json);
                        let placeholder = match bound {
                            Some((_, placeholder)) => placeholder.clone(),
                            None => {
                                let placeholder = query.placeholder_for(json.clone());
                                objects.push((json, placeholder.clone()));
                                placeholder
                            }
                        };
                        query.push(&format!(
                            "jsonb_set({placeholder}, '{{{key}}}', to_jsonb({alias}.{column}))",
                            key = after.key,
                            alias = after.alias,
                            column = after.column,
                        ))
                    }
                    value => query.push_bind(value),
                };
            }
            query = query.push(&format!("{computed} FROM {}", after.alias));
            if let Some(condition) = &self.only_if {
                query = condition.push_where(query);
            }
        }
        query.push(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_rows() -> NewRows {
        NewRows::of(
            "notes",
            "id, body, data",
            [
                Value::from(1_i64),
                Value::from("a".to_string()),
                Value::from(serde_json::json!({"n": ""})),
            ],
        )
        .and([
            Value::from(2_i64),
            Value::from(None::<String>),
            Value::from(None::<serde_json::Value>),
        ])
    }

    const AFTER: After<'static> = After {
        alias: "inserted",
        key: "n",
        column: "number",
    };

    #[test]
    fn rows_written_alone_are_one_insert_with_every_value_bound() {
        let query = two_rows().insert();
        assert_eq!(
            query.sql(),
            "INSERT INTO notes (id, body, data) VALUES ($1, $2, $3), ($4, $5, $6)"
        );
    }

    #[test]
    fn computed_columns_end_every_row_as_sql_in_both_forms() {
        let rows = || {
            NewRows::of("jobs", "id", [Value::from(1_i64)])
                .and([Value::from(2_i64)])
                .computed("run_at", "now()")
        };
        assert_eq!(
            rows().insert().sql(),
            "INSERT INTO jobs (id, run_at) VALUES ($1, now()), ($2, now())"
        );
        let after = rows().push_after(Query::new("WITH inserted AS (SELECT 1)"), "j", AFTER);
        assert_eq!(
            after.sql(),
            "WITH inserted AS (SELECT 1), j AS (INSERT INTO jobs (id, run_at) \
             SELECT $1, now() FROM inserted UNION ALL SELECT $2, now() FROM inserted)"
        );
    }

    #[test]
    fn conditional_rows_are_selected_where_the_condition_holds_in_both_forms() {
        let rows = || {
            NewRows::of("jobs", "id", [Value::from(1_i64)])
                .computed("run_at", "now()")
                .only_if(
                    "EXISTS (SELECT 1 FROM t WHERE a = {} AND b = {})",
                    [Value::from(7_i64), Value::from(8_i64)],
                )
        };
        assert_eq!(
            rows().insert().sql(),
            "INSERT INTO jobs (id, run_at) SELECT $1, now() \
             WHERE EXISTS (SELECT 1 FROM t WHERE a = $2 AND b = $3)"
        );
        let after = rows().push_after(Query::new("WITH inserted AS (SELECT 1)"), "j", AFTER);
        assert_eq!(
            after.sql(),
            "WITH inserted AS (SELECT 1), j AS (INSERT INTO jobs (id, run_at) \
             SELECT $1, now() FROM inserted \
             WHERE EXISTS (SELECT 1 FROM t WHERE a = $2 AND b = $3))"
        );
    }

    #[test]
    fn a_json_object_a_row_holds_twice_is_bound_once() {
        let object = serde_json::json!({"n": "", "subject": "Refund"});
        let rows = NewRows::of(
            "events",
            "data, record",
            [Value::from(object.clone()), Value::from(object)],
        );
        let query = rows.push_after(Query::new("WITH inserted AS (SELECT 1)"), "w", AFTER);
        assert_eq!(
            query.sql(),
            "WITH inserted AS (SELECT 1), w AS (INSERT INTO events (data, record) \
             SELECT jsonb_set($1, '{n}', to_jsonb(inserted.number)), \
             jsonb_set($1, '{n}', to_jsonb(inserted.number)) FROM inserted)"
        );
    }

    #[test]
    fn rows_after_a_record_select_from_it_and_take_its_value_into_json_objects() {
        let statement =
            Query::new("WITH inserted AS (INSERT INTO t VALUES ($1) RETURNING number)").bind(7_i64);
        let query = two_rows().push_after(statement, "notes_written", AFTER);
        assert_eq!(
            query.sql(),
            "WITH inserted AS (INSERT INTO t VALUES ($1) RETURNING number), \
             notes_written AS (INSERT INTO notes (id, body, data) \
             SELECT $2, $3, jsonb_set($4, '{n}', to_jsonb(inserted.number)) FROM inserted \
             UNION ALL SELECT $5, $6, $7 FROM inserted)"
        );
    }
}
