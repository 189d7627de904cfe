//! The cursor key: one random secret for the whole service, in the
//! database, so every node seals and opens the same cursors without any
//! configuration. The first node to start creates it; `ON CONFLICT DO
//! NOTHING` on the one-row table makes concurrent first starts agree on the
//! winner's secret, which every node then reads back.

use rand::RngExt;

use super::cursor::Cursors;
use crate::db::{Db, Query};

impl Cursors {
    /// The service's cursor key, created at first start.
    pub async fn load(db: &Db) -> anyhow::Result<Cursors> {
        let mut fresh = [0u8; 32];
        rand::rng().fill(&mut fresh);
        Query::new(
            "INSERT INTO cursor_secret (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
        )
        .bind(fresh.to_vec())
        .execute(db)
        .await?;
        let stored: Vec<u8> = Query::new("SELECT secret FROM cursor_secret WHERE id = 1")
            .fetch_scalar(db)
            .await?;
        let key: [u8; 32] = stored
            .try_into()
            .map_err(|_| anyhow::anyhow!("the cursor secret is not 32 bytes"))?;
        Ok(Cursors::with_key(key))
    }
}
