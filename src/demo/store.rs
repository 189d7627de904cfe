//! SQL of the demo: which entity the made-up shop stands for.

use crate::bootstrap::DEMO_COMPANY_NAME;
use crate::db::{Db, Query};
use crate::error::StoreError;

/// The TEST widget key of the entity the demo bootstrap created: the first
/// entity of the oldest company, when that company is the demo's (made on
/// an empty database, so it is the oldest, under the demo's name). None
/// otherwise: a database whose oldest company is a customer's has no demo
/// company, and the demo then shows and signs for nobody.
pub async fn demo_widget_key(db: &Db) -> Result<Option<String>, StoreError> {
    Ok(Query::new(
        "SELECT e.widget_key_test FROM entities e JOIN companies c ON c.id = e.company_id \
         WHERE c.name = $1 \
         AND c.id = (SELECT id FROM companies ORDER BY created_at, id LIMIT 1) \
         ORDER BY e.created_at, e.id LIMIT 1",
    )
    .bind(DEMO_COMPANY_NAME)
    .fetch_column(db)
    .await?
    .pop())
}
