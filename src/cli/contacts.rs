//! `supportdesk contacts export`: everything stored about a contact, as
//! the export job makes it (one zip, see docs/contacts.md), written to a
//! file, with its progress printed as it goes. The request is recorded
//! like one made through the API (`GET /jobs/{id}` shows it), but runs
//! here, not on the service's workers.

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;
use uuid::Uuid;

use crate::attachments::{S3Config, Storage};
use crate::auth::{Mode, Tenant};
use crate::contacts::model::JobState;
use crate::contacts::store::jobs;
use crate::db::Db;
use crate::sequences::export;
use crate::time::Clock;

#[derive(Subcommand)]
pub(super) enum ContactAction {
    /// Export everything stored about a contact into one zip file.
    Export {
        /// The company's id.
        #[arg(long)]
        company: Uuid,
        /// The contact's mode: `live` or `test`.
        #[arg(long, default_value = "live")]
        mode: String,
        /// The contact's id.
        #[arg(long)]
        contact: Uuid,
        /// Where to write the zip.
        #[arg(long)]
        out: PathBuf,
        /// The attachments' S3 bucket, when the service keeps them there
        /// (the `AWS_*` variables give the rest).
        #[arg(long, env = "SUPPORTDESK_S3_BUCKET")]
        s3_bucket: Option<String>,
    },
}

/// How often the progress line is printed.
const EVERY: Duration = Duration::from_millis(500);

pub(super) async fn contacts_command(
    db: &Db,
    data_dir: &std::path::Path,
    action: ContactAction,
) -> anyhow::Result<()> {
    let ContactAction::Export {
        company,
        mode,
        contact,
        out,
        s3_bucket,
    } = action;
    let mode =
        Mode::parse(&mode).ok_or_else(|| anyhow::anyhow!("--mode: expected live or test"))?;
    let tenant = Tenant::new(company, mode);
    let s3 = s3_bucket
        .filter(|bucket| !bucket.is_empty())
        .map(|bucket| S3Config {
            bucket,
            ..S3Config::default()
        });
    let storage = Storage::configured(s3.as_ref(), data_dir)?;
    let clock = Clock::default();
    let job = jobs::record(db, &tenant, contact, clock.now()).await?;
    let run = {
        let (db, clock) = (db.clone(), clock.clone());
        tokio::spawn(async move {
            export::archive(&db, &clock, &storage, &tenant, contact, Some(job)).await
        })
    };
    let mut ticker = tokio::time::interval(EVERY);
    while !run.is_finished() {
        ticker.tick().await;
        let seen = jobs::find(db, &tenant, job).await?;
        println!("export {job}: {}%", seen.progress);
    }
    let outcome = run.await?;
    let archive = match outcome {
        Ok(archive) => archive,
        Err(err) => {
            jobs::finish(db, job, Err(err.to_string()), clock.now()).await?;
            return Err(err.into());
        }
    };
    tokio::fs::write(&out, &archive).await?;
    // The zip is in the file: the job keeps none.
    jobs::finish(db, job, Ok(None), clock.now()).await?;
    let done = jobs::find(db, &tenant, job).await?;
    println!(
        "export {job}: {}% ({} bytes written to {})",
        if done.state == JobState::Done {
            100
        } else {
            done.progress
        },
        archive.len(),
        out.display()
    );
    Ok(())
}
