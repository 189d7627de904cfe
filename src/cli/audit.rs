//! `supportdesk audit`: verify a company's audit chain, or drop its start
//! (retention) leaving a checkpoint.

use clap::Subcommand;
use uuid::Uuid;

use crate::audit::{prune, seal, verify};
use crate::db::Db;
use crate::time::Timestamp;

#[derive(Subcommand)]
pub(super) enum AuditAction {
    /// Walk a company's audit chain: says it is whole up to entry N, or
    /// names the first entry changed, removed or reordered (exit code 1).
    Verify {
        /// The company's id.
        #[arg(long)]
        company: Uuid,
    },
    /// Drop a company's sealed entries written before a time, only from
    /// the start of its chain, leaving a checkpoint the rest verifies from
    /// and an `audit.pruned` entry. Refused for a company that keeps every
    /// entry, and for a time inside its retention (`auditRetentionDays`).
    Prune {
        /// The company's id.
        #[arg(long)]
        company: Uuid,
        /// Entries written before this time (RFC 3339) go.
        #[arg(long)]
        before: String,
    },
}

/// What `verify` prints: the verdict, and whether the chain is whole.
pub async fn verify_report(db: &Db, company: Uuid) -> anyhow::Result<(String, bool)> {
    let verdict = verify::verify(db, company).await?;
    let whole = matches!(verdict, verify::Verdict::Whole { .. });
    Ok((
        format!("audit chain of company {company}: {verdict}"),
        whole,
    ))
}

pub(super) async fn audit_command(db: &Db, action: AuditAction) -> anyhow::Result<()> {
    match action {
        AuditAction::Verify { company } => {
            let (line, whole) = verify_report(db, company).await?;
            println!("{line}");
            if !whole {
                anyhow::bail!("the audit chain of company {company} is broken");
            }
            Ok(())
        }
        AuditAction::Prune { company, before } => {
            let before: Timestamp = serde_json::from_value(serde_json::Value::String(before))
                .map_err(|_| anyhow::anyhow!("--before: expected an RFC 3339 time"))?;
            let now = Timestamp::now();
            outside_retention(db, company, before, now).await?;
            // What committed but is not sealed yet is sealed first, so the
            // cut sees the whole chain; the cut's own entry after it, so
            // `verify` covers it at once.
            let forward = &crate::audit::sealer::Forward;
            seal::seal_company(db, company, forward, now).await?;
            let dropped = prune::prune(db, company, before, now).await?;
            seal::seal_company(db, company, forward, now).await?;
            println!("dropped {dropped} audit entries of company {company}");
            Ok(())
        }
    }
}

/// Refuses a cut the company's retention forbids: every entry is kept
/// unless it sets `auditRetentionDays`, and then those written within that
/// many days of `now` are kept (what the retention pass keeps).
async fn outside_retention(
    db: &Db,
    company: Uuid,
    before: Timestamp,
    now: Timestamp,
) -> anyhow::Result<()> {
    let settings = match crate::settings::store::find(db, company).await {
        Err(crate::error::StoreError::NotFound) => anyhow::bail!("no company {company}"),
        found => found?,
    };
    let Some(days) = settings.audit_retention_days else {
        anyhow::bail!(
            "company {company} keeps every audit entry (no auditRetentionDays in its \
             settings): nothing may be pruned"
        );
    };
    let kept_from = now.minus(std::time::Duration::from_secs(
        u64::from(days) * 24 * 60 * 60,
    ));
    if before > kept_from {
        anyhow::bail!(
            "--before {} is inside company {company}'s audit retention of {days} days: \
             entries written after {} are kept",
            before.to_rfc3339(),
            kept_from.to_rfc3339()
        );
    }
    Ok(())
}
