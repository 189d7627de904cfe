//! Every test's database starts as a copy of one that is already migrated.
//! Running the migrations again for each of the suite's two thousand
//! databases was most of the suite's time: SQLite parsing its whole schema
//! again after each step, Postgres running the same DDL in every database.
//! The service still runs its migrations when it starts; on a copy they
//! find every one applied and do nothing, so what a test sees is the same.
//!
//! - SQLite: one migrated file per test process, kept as bytes and written
//!   out as each test's database file.
//! - Postgres: one migrated database per set of migrations, named by their
//!   digest (`sdt_tpl_<digest>`) and kept between runs, that each test's
//!   database is created from (`CREATE DATABASE … TEMPLATE`). `.ci/run`
//!   drops it with the other `sdt_` databases before each run.

use sha2::{Digest, Sha256};
use sqlx::Connection;
use tokio::sync::OnceCell;

use supportdesk::db::Db;

static SQLITE_TEMPLATE: OnceCell<Vec<u8>> = OnceCell::const_new();
static POSTGRES_TEMPLATE: OnceCell<String> = OnceCell::const_new();

/// Writes a migrated SQLite database to `path`.
pub async fn write_sqlite(path: &std::path::Path) {
    let bytes = SQLITE_TEMPLATE.get_or_init(migrated_sqlite).await;
    std::fs::write(path, bytes).expect("write the test database");
}

async fn migrated_sqlite() -> Vec<u8> {
    let dir = tempfile::tempdir().expect("temp dir");
    let migrated = dir.path().join("migrated.db");
    let copy = dir.path().join("copy.db");
    let db = Db::connect(&format!("sqlite://{}?mode=rwc", migrated.display()))
        .await
        .expect("open the template database");
    db.migrate().await.expect("migrate the template database");
    // A file of its own, with nothing left in a write-ahead log beside it.
    supportdesk::on_db!(&db, c => sqlx::query(sqlx::AssertSqlSafe(format!(
        "VACUUM INTO '{}'",
        copy.display()
    )))
    .execute(c)
    .await
    .map(|_| ()))
    .expect("copy the template database");
    db.close().await;
    std::fs::read(&copy).expect("read the template database")
}

/// The name of the migrated Postgres database to copy, made if missing.
pub async fn postgres(admin_url: &str) -> &'static str {
    POSTGRES_TEMPLATE
        .get_or_init(|| migrated_postgres(admin_url))
        .await
}

async fn migrated_postgres(admin_url: &str) -> String {
    let name = format!("sdt_tpl_{}", migrations_digest());
    let mut admin = super::pg_admin(admin_url).await;
    // Once per test process, before its first database.
    super::drop_left_behind(&mut admin).await;
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
            .bind(&name)
            .fetch_one(&mut admin)
            .await
            .expect("look for the template database");
    if exists {
        return name;
    }
    // Built under a name of its own and renamed when complete, so that a
    // test process running beside this one never copies a half-migrated
    // database; the one that renames second drops its own.
    let building = format!("sdt_tplb_{}", uuid::Uuid::new_v4().simple());
    execute(&mut admin, &format!("CREATE DATABASE {building}")).await;
    let db = Db::connect(&super::replace_database(admin_url, &building))
        .await
        .expect("connect to the template database");
    db.migrate().await.expect("migrate the template database");
    db.close().await;
    // Postgres itself waits (up to 5 s) for the closed pool's sessions to
    // end before it renames a database.
    let renamed = sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER DATABASE {building} RENAME TO {name}"
    )))
    .execute(&mut admin)
    .await;
    if renamed.is_err() {
        execute(
            &mut admin,
            &format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"),
        )
        .await;
    }
    admin.close().await.ok();
    name
}

async fn execute(conn: &mut sqlx::PgConnection, sql: &str) {
    sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
        .execute(conn)
        .await
        .unwrap_or_else(|error| panic!("{sql}: {error}"));
}

/// A digest of the Postgres migrations' versions and checksums: a changed
/// or added migration gets a template of its own.
fn migrations_digest() -> String {
    let mut digest = Sha256::new();
    for (version, checksum) in supportdesk::db::postgres_migrations() {
        digest.update(version.to_be_bytes());
        digest.update(checksum);
    }
    hex::encode(&digest.finalize()[..8])
}
