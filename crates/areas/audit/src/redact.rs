//! Erasing a person from the log: the entries about them (their records
//! as targets, or naming them) keep their place in the chain but lose the
//! fields that can name a person. A sealed entry keeps the digest of what
//! those fields held (`redacted_digest`), which is what its hash covers
//! (see `chain`), so the chain still verifies; an unsealed one is simply
//! rewritten and sealed as it then is. Entries sealed in the first
//! canonical form hash their text itself: they cannot be redacted without
//! breaking the chain, so they are left and counted.

use uuid::Uuid;

use crate::db::{Query, Tx};
use crate::erasure::{MARKER, Person};
use crate::error::StoreError;

use super::chain::{CANON, CHAIN_COLUMNS, ChainRow};
use super::seal::hold_chain;

/// What a redaction did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Redacted {
    pub entries: u64,
    /// Entries sealed in the first form, left as they were.
    pub left: u64,
}

/// What a redacted entry's changes read.
const REDACTED_CHANGES: &str = r#"{"redacted":true}"#;

/// Redacts company `company_id`'s entries whose target is one of
/// `targets` or whose fields name `person`, in `tx`, holding the
/// company's chain row so the sealer does not hash an entry while it
/// changes.
pub async fn redact(
    tx: &mut Tx,
    company_id: Uuid,
    targets: &[Uuid],
    person: &Person,
) -> Result<Redacted, StoreError> {
    hold_chain(tx, company_id).await?;
    let mut query = Query::new(format!(
        "SELECT {CHAIN_COLUMNS} FROM audit_entries WHERE company_id = "
    ))
    .push_bind(company_id)
    .push(" AND changes <> ")
    .push_bind(REDACTED_CHANGES)
    .push(" AND (");
    if !targets.is_empty() {
        query = query
            .push("target_id IN ")
            .push_bind_list(targets.iter().copied())
            .push(" OR ");
    }
    for column in ["actor_name", "changes", "ip", "user_agent"] {
        query = person.push_mentions(query, &format!("coalesce({column}, '')"));
        query = query.push(" OR ");
    }
    let rows: Vec<ChainRow> = query.push("1 = 0)").fetch_all(&mut *tx).await?;
    let mut done = Redacted::default();
    for row in rows {
        let digest = match (row.seq, row.canon) {
            (None, _) => None,
            (Some(_), canon) if canon >= CANON => Some(
                row.redacted_digest
                    .clone()
                    .unwrap_or_else(|| row.personal_digest()),
            ),
            (Some(_), _) => {
                done.left += 1;
                continue;
            }
        };
        let actor_name = person
            .scrub(&row.actor_name)
            .unwrap_or_else(|| row.actor_name.clone());
        let actor_name = if row.actor_type == "visitor" {
            MARKER.to_string()
        } else {
            actor_name
        };
        Query::new(
            "UPDATE audit_entries SET actor_name = $2, changes = $3, ip = NULL, \
             user_agent = NULL, redacted_digest = $4 WHERE id = $1",
        )
        .bind(row.id)
        .bind(actor_name)
        .bind(REDACTED_CHANGES)
        .bind(digest)
        .execute(&mut *tx)
        .await?;
        done.entries += 1;
    }
    Ok(done)
}
