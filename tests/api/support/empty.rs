//! A database no service has started on yet, for tests of a first start.

use supportdesk::Config;

use super::{Backend, TempPgDatabase, pg_admin, replace_database};

/// A database no service has started on yet (not migrated), dropped with
/// this value: for tests of what nodes do on their first start.
pub struct EmptyDatabase {
    pub url: String,
    pub dir: tempfile::TempDir,
    _pg: Option<TempPgDatabase>,
}

impl EmptyDatabase {
    pub async fn create(backend: Backend) -> EmptyDatabase {
        let dir = tempfile::tempdir().expect("temp dir");
        match backend {
            Backend::Sqlite => EmptyDatabase {
                url: format!(
                    "sqlite://{}?mode=rwc",
                    dir.path().join("fresh.db").display()
                ),
                dir,
                _pg: None,
            },
            Backend::Postgres => {
                let admin_url = super::pg::admin_url();
                let name = format!("sdt_{}", uuid::Uuid::new_v4().simple());
                let mut conn = pg_admin(&admin_url).await;
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "CREATE DATABASE {name} TEMPLATE template0"
                )))
                .execute(&mut conn)
                .await
                .expect("create an empty database");
                let url = replace_database(&admin_url, &name);
                EmptyDatabase {
                    url,
                    dir,
                    _pg: Some(TempPgDatabase { admin_url, name }),
                }
            }
        }
    }

    /// A node's config on this database (with the test Redis on Postgres).
    pub fn config(&self, backend: Backend) -> Config {
        let mut config = Config::new(self.url.clone(), self.dir.path().to_path_buf());
        config.undo_send = std::time::Duration::ZERO;
        if backend == Backend::Postgres {
            config.redis_url = std::env::var("TEST_REDIS_URL")
                .ok()
                .filter(|u| !u.is_empty());
            config.redis_prefix = format!("sdt:{}:", uuid::Uuid::new_v4().simple());
        }
        config
    }
}
