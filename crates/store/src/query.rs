//! The one way stores build and run SQL whose text or values vary: push text,
//! bind typed values (each `push_bind` writes the next `$n`), and run the
//! result on either backend, through a pool or inside a transaction. The
//! tenant's company and mode are bound by `push_tenant` / `bind_tenant` only,
//! so a tenant-scoped query cannot bind them wrongly or forget one.

use sqlx::postgres::{PgArguments, PgRow};
use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{Arguments, AssertSqlSafe, FromRow};
use uuid::Uuid;

use vocab::value::Value;

use super::{Db, Tx};
use vocab::error::StoreError;
use vocab::tenant::Tenant;
use vocab::time::Timestamp;

/// Runs `$body` with `$c` bound to a connection of `$pool`, kept for the
/// next statement when `$body` succeeds (see `pool::Conn::finished`).
macro_rules! on_pooled {
    ($pool:expr, |$c:ident| $body:expr) => {
        match $pool.acquire().await {
            Ok(mut conn) => {
                let result = {
                    let $c = conn.connection();
                    $body
                };
                conn.answered();
                if result.is_ok() {
                    conn.finished();
                }
                result
            }
            Err(err) => Err(err),
        }
    };
}

/// Builds the backend's arguments and runs `$body` with the sqlx query
/// (`$make(sql, arguments)`) as `$q` and the executor as `$c`.
macro_rules! run {
    ($on:expr, $query:expr, $make:path, |$q:ident, $c:ident| $body:expr) => {{
        let query = $query;
        let persistent = !query.planned_per_call;
        match $on {
            On::Db(Db::Postgres(pool)) => {
                let arguments = query.pg_arguments()?;
                let $q = $make(AssertSqlSafe(query.sql), arguments).persistent(persistent);
                on_pooled!(pool, |$c| $body)
            }
            On::Db(Db::Sqlite(pool)) => {
                let arguments = query.sqlite_arguments()?;
                let $q = $make(AssertSqlSafe(query.sql), arguments).persistent(persistent);
                on_pooled!(pool, |$c| $body)
            }
            On::Tx(Tx {
                open: super::Open::Postgres(tx),
                ..
            }) => {
                let arguments = query.pg_arguments()?;
                let $q = $make(AssertSqlSafe(query.sql), arguments).persistent(persistent);
                let result = {
                    let $c = tx.connection();
                    $body
                };
                tx.answered();
                result
            }
            On::Tx(Tx {
                open: super::Open::Sqlite(tx),
                ..
            }) => {
                let arguments = query.sqlite_arguments()?;
                let $q = $make(AssertSqlSafe(query.sql), arguments).persistent(persistent);
                let result = {
                    let $c = tx.connection();
                    $body
                };
                tx.answered();
                result
            }
        }
    }};
}

/// Runs `$query` on `$on` as `run!` does, timed, with its constraint
/// violations given their meaning. Boxed where it starts: the pool's acquire
/// and sqlx's execution would otherwise sit inline in every caller's future,
/// and handler futures are moved by value each time axum boxes one.
macro_rules! run_statement {
    ($query:expr, $on:expr, $make:path, |$q:ident, $c:ident| $body:expr) => {{
        let query = $query;
        let on = $on.into();
        Box::pin(async move {
            let _timer = crate::timing::QueryTimer::start(query.store);
            let errors = query.errors();
            let result = run!(on, query, $make, |$q, $c| $body);
            result.map_err(|err| errors.map(err))
        })
        .await
    }};
}

/// Where a query runs: on the pool, or inside an open transaction.
pub enum On<'c> {
    Db(&'c Db),
    Tx(&'c mut Tx),
}

impl On<'_> {
    /// The same pool or transaction, for one more query.
    pub fn reborrow(&mut self) -> On<'_> {
        match self {
            On::Db(db) => On::Db(db),
            On::Tx(tx) => On::Tx(tx),
        }
    }
}

impl<'c> From<&'c Db> for On<'c> {
    fn from(db: &'c Db) -> Self {
        On::Db(db)
    }
}

impl<'c> From<&'c mut Tx> for On<'c> {
    fn from(tx: &'c mut Tx) -> Self {
        On::Tx(tx)
    }
}

/// A row type readable from both backends.
pub trait AnyRow:
    for<'r> FromRow<'r, PgRow> + for<'r> FromRow<'r, SqliteRow> + Send + Unpin
{
}

impl<T> AnyRow for T where
    T: for<'r> FromRow<'r, PgRow> + for<'r> FromRow<'r, SqliteRow> + Send + Unpin
{
}

/// SQL text and its bind values, plus what a constraint violation means in
/// the request's terms (the store that writes a row knows which field a
/// unique or foreign key refers to).
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct Query {
    sql: String,
    values: Vec<Value>,
    unique_field: Option<&'static str>,
    foreign_key: Option<(&'static str, &'static str)>,
    planned_per_call: bool,
    /// The store module that built it: the label of its timing (metrics).
    store: &'static str,
}

impl Query {
    /// Starts with `sql`, which may already contain `$1…$n`: give their
    /// values with `bind`, in order, before any `push_bind`.
    #[track_caller]
    pub fn new(sql: impl Into<String>) -> Self {
        Query {
            sql: sql.into(),
            store: crate::timing::store_label(std::panic::Location::caller().file()),
            ..Self::default()
        }
    }

    pub fn push(mut self, sql: &str) -> Self {
        self.sql.push_str(sql);
        self
    }

    /// The value of the next placeholder already written in the text.
    pub fn bind(mut self, value: impl Into<Value>) -> Self {
        self.values.push(value.into());
        self
    }

    /// Writes the next placeholder and binds `value` to it.
    pub fn push_bind(mut self, value: impl Into<Value>) -> Self {
        self.values.push(value.into());
        self.sql.push_str(&format!("${}", self.values.len()));
        self
    }

    /// Binds `value` and answers its placeholder, for text that uses one
    /// value more than once or is written after its values are bound.
    pub fn placeholder_for(&mut self, value: impl Into<Value>) -> String {
        self.values.push(value.into());
        format!("${}", self.values.len())
    }

    /// Puts `sql` before the text (an `EXPLAIN`, say); placeholders keep
    /// their numbers.
    pub fn prefixed(mut self, sql: &str) -> Self {
        self.sql.insert_str(0, sql);
        self
    }

    /// Writes `($a, $b, …)` with one placeholder per value.
    pub fn push_bind_list<V: Into<Value>>(mut self, values: impl IntoIterator<Item = V>) -> Self {
        self.sql.push('(');
        for (i, value) in values.into_iter().enumerate() {
            if i > 0 {
                self.sql.push_str(", ");
            }
            self = self.push_bind(value);
        }
        self.sql.push(')');
        self
    }

    /// Writes `alias.company_id = $n AND alias.mode = $m` (no alias when
    /// `alias` is empty) and binds the tenant's company and mode.
    pub fn push_tenant(self, tenant: &Tenant, alias: &str) -> Self {
        let prefix = if alias.is_empty() {
            String::new()
        } else {
            format!("{alias}.")
        };
        let company = self.values.len() + 1;
        self.push(&format!(
            "{prefix}company_id = ${company} AND {prefix}mode = ${}",
            company + 1
        ))
        .bind_tenant(tenant)
    }

    /// Binds the tenant's company and mode to the next two placeholders
    /// already written in the text (an INSERT's values, say).
    pub fn bind_tenant(self, tenant: &Tenant) -> Self {
        self.bind(tenant.company_id).bind(tenant.mode.as_str())
    }

    /// A unique violation on this statement means `field`'s value is taken.
    pub fn unique_field(mut self, field: &'static str) -> Self {
        self.unique_field = Some(field);
        self
    }

    /// A foreign-key violation on this statement means `field` names no
    /// record it may name (the record vanished or never existed).
    pub fn foreign_key_field(mut self, field: &'static str, message: &'static str) -> Self {
        self.foreign_key = Some((field, message));
        self
    }

    /// The SQL text as it will be sent.
    /// Plans the statement with its values every time it runs instead of
    /// once for any values (it is not kept prepared). For statements whose
    /// best plan depends on the values: a search's plan depends on how many
    /// tickets the company holds, and Postgres' plan for any company, made
    /// for one of average size, builds a hash of every ticket of a company
    /// with a million (seconds instead of milliseconds).
    pub fn planned_per_call(mut self) -> Self {
        self.planned_per_call = true;
        self
    }

    pub fn is_planned_per_call(&self) -> bool {
        self.planned_per_call
    }

    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// Runs a statement for its effect.
    pub async fn execute<'c>(self, on: impl Into<On<'c>>) -> Result<(), StoreError> {
        self.rows_affected(on).await.map(|_| ())
    }

    /// Runs a statement that must change a row: NotFound when none matched.
    pub async fn execute_or_not_found<'c>(self, on: impl Into<On<'c>>) -> Result<(), StoreError> {
        match self.rows_affected(on).await? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        }
    }

    /// Runs a statement and answers how many rows it changed.
    pub async fn rows_affected<'c>(self, on: impl Into<On<'c>>) -> Result<u64, StoreError> {
        run_statement!(self, on, sqlx::query_with, |q, c| q
            .execute(c)
            .await
            .map(|done| done.rows_affected()))
    }

    pub async fn fetch_all<'c, R: AnyRow>(
        self,
        on: impl Into<On<'c>>,
    ) -> Result<Vec<R>, StoreError> {
        run_statement!(self, on, sqlx::query_as_with, |q, c| q.fetch_all(c).await)
    }

    /// The first row; NotFound when there is none.
    pub async fn fetch_one<'c, R: AnyRow>(self, on: impl Into<On<'c>>) -> Result<R, StoreError> {
        self.fetch_optional(on).await?.ok_or(StoreError::NotFound)
    }

    pub async fn fetch_optional<'c, R: AnyRow>(
        self,
        on: impl Into<On<'c>>,
    ) -> Result<Option<R>, StoreError> {
        run_statement!(self, on, sqlx::query_as_with, |q, c| q
            .fetch_optional(c)
            .await)
    }

    /// The first column of every row.
    pub async fn fetch_column<'c, T>(self, on: impl Into<On<'c>>) -> Result<Vec<T>, StoreError>
    where
        (T,): AnyRow,
        T: Send + Unpin,
    {
        let rows: Vec<(T,)> = self.fetch_all(on).await?;
        Ok(rows.into_iter().map(|(value,)| value).collect())
    }

    /// The first column of the first row; NotFound when there is none.
    pub async fn fetch_scalar<'c, T>(self, on: impl Into<On<'c>>) -> Result<T, StoreError>
    where
        (T,): AnyRow,
        T: Send + Unpin,
    {
        let (value,): (T,) = self.fetch_one(on).await?;
        Ok(value)
    }

    fn errors(&self) -> ErrorMeaning {
        ErrorMeaning {
            unique_field: self.unique_field,
            foreign_key: self.foreign_key,
        }
    }

    fn pg_arguments(&self) -> Result<PgArguments, StoreError> {
        let mut args = PgArguments::default();
        for value in &self.values {
            add_value(&mut args, value)?;
        }
        Ok(args)
    }

    fn sqlite_arguments(&self) -> Result<SqliteArguments, StoreError> {
        let mut args = SqliteArguments::default();
        for value in &self.values {
            add_value(&mut args, value)?;
        }
        Ok(args)
    }
}

fn add_value<'v, A>(args: &mut A, value: &'v Value) -> Result<(), StoreError>
where
    A: Arguments,
    for<'t> Option<Uuid>: sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
    for<'t> Option<String>: sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
    for<'t> &'v str: sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
    for<'t> Option<i64>: sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
    for<'t> Option<f64>: sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
    for<'t> Option<bool>: sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
    for<'t> Option<Timestamp>: sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
    for<'t> Option<sqlx::types::Json<serde_json::Value>>:
        sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
    for<'t> sqlx::types::Json<&'v serde_json::Value>:
        sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
    for<'t> Option<Vec<u8>>: sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
    for<'t> &'v [u8]: sqlx::Encode<'t, A::Database> + sqlx::Type<A::Database>,
{
    // Borrowed, not cloned: the arguments encode each value as it is
    // added, so a query's texts, JSON documents and bytes are copied once,
    // by that encoding (into the message to Postgres, or into SQLite's
    // own argument values). A NULL is added as an owned `None`: sqlx's
    // `Option` encoding wants a value that outlives any borrow.
    let added = match value {
        Value::Uuid(v) => args.add(*v),
        Value::Text(Some(v)) => args.add(v.as_str()),
        Value::Text(None) => args.add(None::<String>),
        Value::Int(v) => args.add(*v),
        Value::Float(v) => args.add(*v),
        Value::Bool(v) => args.add(*v),
        Value::Time(v) => args.add(*v),
        Value::Json(Some(v)) => args.add(sqlx::types::Json(v)),
        Value::Json(None) => args.add(None::<sqlx::types::Json<serde_json::Value>>),
        Value::Bytes(Some(v)) => args.add(v.as_slice()),
        Value::Bytes(None) => args.add(None::<Vec<u8>>),
    };
    added.map_err(|err| StoreError::Database(sqlx::Error::Encode(err)))
}

/// What the statement's constraint violations mean to the client.
struct ErrorMeaning {
    unique_field: Option<&'static str>,
    foreign_key: Option<(&'static str, &'static str)>,
}

impl ErrorMeaning {
    fn map(&self, err: sqlx::Error) -> StoreError {
        if let sqlx::Error::Database(db) = &err {
            if let (true, Some(field)) = (db.is_unique_violation(), self.unique_field) {
                return StoreError::Conflict(field.to_string());
            }
            if let (true, Some((field, message))) =
                (db.is_foreign_key_violation(), self.foreign_key)
            {
                return StoreError::InvalidReference {
                    field: field.to_string(),
                    message: message.to_string(),
                };
            }
        }
        StoreError::from(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vocab::tenant::Mode;

    #[test]
    fn push_bind_numbers_after_the_written_placeholders() {
        let tenant = Tenant::new(Uuid::now_v7(), Mode::Test);
        let query = Query::new("SELECT id FROM t WHERE id = $1 AND ")
            .bind(Uuid::now_v7())
            .push_tenant(&tenant, "t")
            .push(" AND status IN ")
            .push_bind_list(["OPEN", "PENDING"]);
        assert_eq!(
            query.sql(),
            "SELECT id FROM t WHERE id = $1 AND t.company_id = $2 AND t.mode = $3 \
             AND status IN ($4, $5)"
        );
    }
}
