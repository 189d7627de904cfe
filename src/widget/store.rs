//! SQL of the widget API: which entity, company and mode a public widget
//! key names.

use uuid::Uuid;

use crate::auth::{Mode, Tenant};
use crate::companies::CompanyStatus;
use crate::db::{Db, Query};
use crate::error::StoreError;

/// What a widget key opens: one entity of one company, in one mode.
#[derive(Debug, Clone)]
pub struct WidgetTarget {
    pub entity_id: Uuid,
    pub entity_name: String,
    pub tenant: Tenant,
    /// `active` or `suspended`.
    pub company_status: CompanyStatus,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: Uuid,
    company_id: Uuid,
    name: String,
    company_status: CompanyStatus,
}

/// The target of `widget_key` (`wk_test_…` or `wk_live_…`), None when no
/// entity has it. The prefix picks the column, so the lookup is one unique
/// index probe.
pub async fn resolve(db: &Db, widget_key: &str) -> Result<Option<WidgetTarget>, StoreError> {
    let (mode, column) = if widget_key.starts_with("wk_test_") {
        (Mode::Test, "widget_key_test")
    } else if widget_key.starts_with("wk_live_") {
        (Mode::Live, "widget_key_live")
    } else {
        return Ok(None);
    };
    let sql = format!(
        "SELECT e.id, e.company_id, e.name, c.status AS company_status \
         FROM entities e JOIN companies c ON c.id = e.company_id WHERE e.{column} = $1"
    );
    let row: Option<Row> = Query::new(sql).bind(widget_key).fetch_optional(db).await?;
    Ok(row.map(|row| WidgetTarget {
        entity_id: row.id,
        entity_name: row.name,
        tenant: Tenant {
            company_id: row.company_id,
            mode,
        },
        company_status: row.company_status,
    }))
}
