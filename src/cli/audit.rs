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
    /// the start of its chain, leaving a checkpoint the rest verifies from.
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
            // What committed but is not sealed yet is sealed first, so the
            // cut sees the whole chain.
            seal::seal_company(
                db,
                company,
                &crate::audit::sealer::Forward,
                Timestamp::now(),
            )
            .await?;
            let dropped = prune::prune(db, company, before, Timestamp::now()).await?;
            println!("dropped {dropped} audit entries of company {company}");
            Ok(())
        }
    }
}
