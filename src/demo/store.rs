//! SQL of the demo: which widget the made-up shop embeds.

use crate::db::{Db, Query};
use crate::error::StoreError;

/// The TEST widget key of the oldest entity: the demo company's on a fresh
/// start, or the first one created with the CLI. None on an empty database.
pub async fn first_test_widget_key(db: &Db) -> Result<Option<String>, StoreError> {
    Ok(
        Query::new("SELECT widget_key_test FROM entities ORDER BY created_at, id LIMIT 1")
            .fetch_column(db)
            .await?
            .pop(),
    )
}
