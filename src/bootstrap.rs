//! First start on an empty database: a demo company, an entity, one TEST
//! key with every scope and an admin account to sign in with (its password
//! printed once), so `cargo run` gives a working service at once.
//! Only for the embedded SQLite default or when asked (`serve --demo`,
//! `SUPPORTDESK_DEMO=true`); a production start on Postgres creates nothing
//! and prints the commands that create a company and a key instead.

use serde::Serialize;
use sqlx::Connection;

use crate::auth::{Mode, ScopeSet};
use crate::companies::{self, Company};
use crate::db::{Backend, Db};
use crate::entities::{self, Entity};
use crate::keys::{self, NewKey};
use crate::time::Timestamp;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DemoCreated {
    pub company: Company,
    pub entity: Entity,
    /// The key value, shown this once.
    pub key: String,
    /// The admin account's email and password (shown this once).
    pub owner_email: String,
    pub owner_password: String,
    pub demo_url: String,
    pub visitor_url: String,
}

/// The name of the company the demo creates; the demo's shop and its
/// identity-token route stand for it only (`demo::store::demo_widget_key`).
pub const DEMO_COMPANY_NAME: &str = "Demo Company";

/// The demo admin account's email.
pub const DEMO_OWNER_EMAIL: &str = "admin@demo.example";

/// The Postgres advisory lock key that serialises demo creation between
/// nodes starting together ("sd-demo" in ASCII).
pub const DEMO_LOCK: i64 = 0x73_64_2d_64_65_6d_6f;

/// What a start does with the database: on SQLite, or with `demo`, creates the
/// demo when it has no company; otherwise, on an empty database, prints how to
/// create a company and a key.
pub async fn on_start(
    db: &Db,
    demo: bool,
    public_url: &str,
) -> anyhow::Result<Option<DemoCreated>> {
    if demo || db.backend() == Backend::Sqlite {
        return ensure_demo(db, public_url).await;
    }
    if companies::store::count(db).await? == 0 {
        println!("This database has no company yet. Create one and an API key with:");
        println!("  supportdesk companies create --name \"Acme\"");
        println!("  supportdesk keys create --company <company id> --type live --scopes all");
        println!("(or start with --demo / SUPPORTDESK_DEMO=true for a demo company and TEST key)");
    }
    Ok(None)
}

/// Creates the demo records when the database has no company yet. On
/// Postgres an advisory lock makes check-and-create atomic across nodes.
pub async fn ensure_demo(db: &Db, public_url: &str) -> anyhow::Result<Option<DemoCreated>> {
    let Db::Postgres(pool) = db else {
        // SQLite serves one process: apps built together in it take turns.
        static IN_PROCESS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
        let _turn = IN_PROCESS.lock().await;
        return create_if_empty(db, public_url).await;
    };
    // The wait is for another node's demo, which takes as long as it takes
    // (a password hash on a busy machine), so it runs on a connection of
    // its own without the statement timeout, which would cut it short and
    // fail this start. Closing the connection afterwards releases the lock
    // and takes the setting with it.
    let mut lock = pool.sqlx().acquire().await?.detach();
    sqlx::raw_sql("SET statement_timeout = 0")
        .execute(&mut lock)
        .await?;
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(DEMO_LOCK)
        .execute(&mut lock)
        .await?;
    let created = create_if_empty(db, public_url).await;
    if let Err(error) = lock.close().await {
        // The server releases the lock as the connection drops anyway.
        tracing::warn!(%error, "closing the demo lock's connection");
    }
    created
}

async fn create_if_empty(db: &Db, public_url: &str) -> anyhow::Result<Option<DemoCreated>> {
    if companies::store::count(db).await? > 0 {
        return Ok(None);
    }
    // The demo is made as a node starts or by the CLI, before or outside
    // any node's clock: the wall clock stamps it.
    let now = Timestamp::now();
    let company = companies::store::create(db, DEMO_COMPANY_NAME, now).await?;
    let entity = entities::store::create(db, company.id, "Demo", None, now).await?;
    let (_, key) = keys::store::create(
        db,
        NewKey {
            company_id: company.id,
            name: "Demo key".into(),
            mode: Mode::Test,
            scopes: ScopeSet::all(),
            rate_limit: keys::store::DEFAULT_RATE_LIMIT,
            expires_at: None,
        },
        now,
    )
    .await?;
    let owner_password = crate::auth::key::random_base62(16);
    let password = crate::accounts::password::NewPassword::parse(&owner_password)
        .map_err(|reason| anyhow::anyhow!("the demo password {reason}"))?;
    let hash = tokio::task::spawn_blocking(move || password.hash())
        .await?
        .map_err(|error| anyhow::anyhow!("could not hash the demo password: {error}"))?;
    let tenant = crate::auth::Tenant::new(company.id, Mode::Test);
    let owner = crate::users::store::NewUser {
        id: None,
        name: "Demo Admin".into(),
        email: DEMO_OWNER_EMAIL.into(),
        role: crate::roles::RoleRef::BuiltIn(crate::roles::BuiltInRole::Owner),
    };
    let mut tx = db.begin().await?;
    let owner = crate::users::store::create_in(&mut tx, &tenant, owner, now).await?;
    crate::users::credentials::set_password_hash(&mut tx, company.id, owner.id, &hash, now).await?;
    tx.commit().await?;
    let visitor_url = format!(
        "{public_url}/demo/visitor.html#widgetKey={}",
        entity.widget_key_test
    );
    Ok(Some(DemoCreated {
        demo_url: format!("{public_url}/demo/"),
        visitor_url,
        company,
        entity,
        key,
        owner_email: DEMO_OWNER_EMAIL.into(),
        owner_password,
    }))
}
