//! First start on an empty database: a demo company, an entity and one TEST
//! key with every scope, so `cargo run` gives a working service at once.

use serde::Serialize;

use crate::auth::{Mode, ScopeSet};
use crate::companies::{self, Company};
use crate::db::Db;
use crate::entities::{self, Entity};
use crate::keys::{self, NewKey};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DemoCreated {
    pub company: Company,
    pub entity: Entity,
    /// The key value, shown this once.
    pub key: String,
    pub demo_url: String,
    pub visitor_url: String,
}

/// Creates the demo records when the database has no company yet.
pub async fn ensure_demo(db: &Db, public_url: &str) -> anyhow::Result<Option<DemoCreated>> {
    if companies::store::count(db).await? > 0 {
        return Ok(None);
    }
    let company = companies::store::create(db, "Demo Company").await?;
    let entity = entities::store::create(db, company.id, "Demo", None).await?;
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
    )
    .await?;
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
    }))
}
