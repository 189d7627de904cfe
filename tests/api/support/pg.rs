//! A Postgres database of its own for each test, copied from a template
//! migrated once, and dropped after the test.

use super::template;

/// A Postgres database created for one test and dropped after it.
pub(super) struct TempPgDatabase {
    pub(super) admin_url: String,
    pub(super) name: String,
}

impl TempPgDatabase {
    pub(super) async fn create() -> (TempPgDatabase, String) {
        let admin_url = admin_url();
        let name = format!(
            "{DB_PREFIX}{}_{}",
            unix_secs(),
            uuid::Uuid::new_v4().simple()
        );
        let template = template::postgres(&admin_url).await;
        let mut conn = pg_admin(&admin_url).await;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "CREATE DATABASE {name} TEMPLATE {template}"
        )))
        .execute(&mut conn)
        .await
        .expect("create test database");
        // A commit here waits about 4 ms for its WAL flush; the tests never
        // crash this server (the outage tests start a Postgres of their
        // own), so they do not wait for durability they cannot observe.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ALTER DATABASE {name} SET synchronous_commit = off"
        )))
        .execute(&mut conn)
        .await
        .expect("set the test database's commits asynchronous");
        let url = replace_database(&admin_url, &name);
        (TempPgDatabase { admin_url, name }, url)
    }
}

/// `TEST_DATABASE_URL`, without TLS when it names a server on loopback
/// and no `sslmode`: the client's default (`prefer`) does a TLS handshake
/// on every new connection of a server with TLS on (Debian's is), about
/// 2.5 ms of CPU on each side (`pgbench -C` here: 7.2 ms a connection with
/// it, 4.5 without), and the tests open several thousand connections.
pub(super) fn admin_url() -> String {
    let url = std::env::var("TEST_DATABASE_URL").expect("TEST_DATABASE_URL");
    let host = url
        .split_once("://")
        .map(|(_, rest)| rest.rsplit_once('@').map_or(rest, |(_, host)| host))
        .unwrap_or("");
    let loopback = ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|name| host.starts_with(name));
    if !loopback || url.contains("sslmode=") {
        return url;
    }
    let joiner = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joiner}sslmode=disable")
}

/// A connection to the server as its administrator. The server's
/// connection limit (100 by default) can be reached for a moment by the
/// test apps' pools together: one refused with "too many clients" (53300)
/// is tried again a few times, as a pool would.
pub(super) async fn pg_admin(url: &str) -> sqlx::PgConnection {
    use sqlx::Connection;
    let mut tries = 0;
    loop {
        tries += 1;
        match sqlx::PgConnection::connect(url).await {
            Ok(conn) => return conn,
            Err(sqlx::Error::Database(error))
                if error.code().as_deref() == Some("53300") && tries < 20 =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
            Err(error) => panic!("connect to TEST_DATABASE_URL: {error}"),
        }
    }
}

/// A test's database is named `sdt_<unix seconds>_<uuid>`: the seconds let a
/// later run drop what an earlier one left behind.
const DB_PREFIX: &str = "sdt_";

fn unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0)
}

impl Drop for TempPgDatabase {
    /// Drops the database on a thread of its own that the test does not
    /// wait for: `DROP DATABASE` waits for a checkpoint (1.5 to 3.7 s here
    /// with other tests writing), which each Postgres test otherwise spent
    /// idle at its end. The drops still running when the test process
    /// exits leave their databases behind; the next run's first Postgres
    /// test drops those (`drop_left_behind`).
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let name = self.name.clone();
        // Drop runs inside the test's runtime: the thread has its own.
        std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                let mut conn = pg_admin(&admin_url).await;
                let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .execute(&mut conn)
                .await;
            });
        });
    }
}

/// Drops the test databases an earlier test process left behind (created
/// over an hour ago: a test process running beside this one keeps its own).
pub(crate) async fn drop_left_behind(admin: &mut sqlx::PgConnection) {
    let names: Vec<String> =
        sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'sdt\\_%'")
            .fetch_all(&mut *admin)
            .await
            .unwrap_or_default();
    let hour_ago = unix_secs().saturating_sub(3600);
    for name in names {
        let created = name
            .strip_prefix(DB_PREFIX)
            .and_then(|rest| rest.split_once('_'))
            .and_then(|(secs, _)| secs.parse::<u64>().ok());
        if created.is_some_and(|secs| secs < hour_ago) {
            let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut *admin)
            .await;
        }
    }
}

/// `postgres://u@h:5432/test?x=y` with its database replaced by `name`.
pub fn replace_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let host_part = match base[scheme_end..].find('/') {
        Some(slash) => &base[..scheme_end + slash],
        None => base,
    };
    match query {
        Some(q) => format!("{host_part}/{name}?{q}"),
        None => format!("{host_part}/{name}"),
    }
}
