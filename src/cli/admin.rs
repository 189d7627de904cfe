//! The administration commands: companies, entities and API keys, written
//! straight to the database (a node's API has no company above it).

use std::time::Duration;

use clap::Subcommand;
use uuid::Uuid;

use super::BusArgs;
use crate::auth::cache::Invalidation;
use crate::auth::{Mode, ScopeSet};
use crate::db::Db;
use crate::keys::{self, NewKey};
use crate::realtime::credentials::Notice;
use crate::time::Timestamp;
use crate::{companies, entities};

/// What `supportdesk companies` does.
#[derive(Subcommand)]
pub(super) enum CompanyAction {
    /// Create a company (then create its API key with `keys create`).
    Create {
        /// The company's name.
        #[arg(long)]
        name: String,
        /// Print the company as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// List every company, oldest first: the way to find the id of a
    /// company whose key was lost.
    List {
        /// Print `{"data": [companies]}` as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Suspend a company: its keys answer 403 and its sockets close.
    Suspend {
        /// The company's id.
        id: Uuid,
    },
    /// Reactivate a suspended company.
    Activate {
        /// The company's id.
        id: Uuid,
    },
}

/// What `supportdesk entities` does.
#[derive(Subcommand)]
pub(super) enum EntityAction {
    /// Create an entity (a brand, site or department) of a company.
    Create {
        /// The company's id.
        #[arg(long)]
        company: Uuid,
        /// The entity's name.
        #[arg(long)]
        name: String,
        /// The id of the parent entity, if any.
        #[arg(long)]
        parent: Option<Uuid>,
        /// Print the entity as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// What `supportdesk keys` does.
#[derive(Subcommand)]
pub(super) enum KeyAction {
    /// Create an API key; its value is printed this once.
    Create {
        /// The company's id.
        #[arg(long)]
        company: Uuid,
        /// `test` or `live`: which data the key sees.
        #[arg(long = "type", value_parser = ["test", "live"])]
        mode: String,
        /// Comma-separated scopes, or `all`.
        #[arg(long, default_value = "all")]
        scopes: String,
        /// Requests per hour.
        #[arg(long, default_value_t = keys::store::DEFAULT_RATE_LIMIT)]
        rate_limit: i64,
        /// Lifetime such as `30d`, `12h`, `15m`, `45s`.
        #[arg(long, value_parser = crate::time::parse_duration)]
        expires_in: Option<Duration>,
        /// The key's name, for people reading the list.
        #[arg(long, default_value = "CLI key")]
        name: String,
        /// Print the key (with its value) as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// List a company's keys, both types, newest first (never their values).
    List {
        /// The company's id.
        #[arg(long)]
        company: Uuid,
        /// Print `{"data": [keys]}` as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key: it no longer authenticates, on every node.
    Revoke {
        /// The key's id.
        id: Uuid,
    },
}

fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string(value)?);
    Ok(())
}

/// The CLI's time: it runs outside any node, so the wall clock.
fn now() -> Timestamp {
    Timestamp::now()
}

pub(super) async fn companies_command(
    db: &Db,
    bus: &BusArgs,
    action: CompanyAction,
) -> anyhow::Result<()> {
    let (company, json) = match action {
        CompanyAction::Create { name, json } => {
            (companies::store::create(db, &name, now()).await?, json)
        }
        CompanyAction::List { json } => return list_companies(db, json).await,
        CompanyAction::Suspend { id } => {
            let company = companies::store::set_suspended(db, id, true, now()).await?;
            let notice = Notice::CompanySuspended { company_id: id };
            bus.announce(Invalidation::Company(id), Some(notice)).await;
            (company, false)
        }
        CompanyAction::Activate { id } => {
            let company = companies::store::set_suspended(db, id, false, now()).await?;
            bus.announce(Invalidation::Company(id), None).await;
            (company, false)
        }
    };
    if json {
        print_json(&company)
    } else {
        println!(
            "company {} ({}): {}",
            company.id, company.name, company.status
        );
        Ok(())
    }
}

pub(super) async fn entities_command(db: &Db, action: EntityAction) -> anyhow::Result<()> {
    let EntityAction::Create {
        company,
        name,
        parent,
        json,
    } = action;
    let entity = entities::store::create(db, company, &name, parent, now()).await?;
    if json {
        print_json(&entity)
    } else {
        println!("entity {} ({})", entity.id, entity.name);
        Ok(())
    }
}

pub(super) async fn keys_command(db: &Db, bus: &BusArgs, action: KeyAction) -> anyhow::Result<()> {
    match action {
        KeyAction::Create {
            company,
            mode,
            scopes,
            rate_limit,
            expires_in,
            name,
            json,
        } => {
            let scopes = ScopeSet::parse_list(&scopes)
                .map_err(|unknown| anyhow::anyhow!("unknown scopes: {}", unknown.join(", ")))?;
            anyhow::ensure!(rate_limit > 0, "--rate-limit must be positive");
            companies::store::find(db, company).await?;
            let (record, key) = keys::store::create(
                db,
                NewKey {
                    company_id: company,
                    name,
                    // `--type` takes the column spelling (`test`, `live`).
                    mode: Mode::from_stored(&mode)?,
                    scopes,
                    rate_limit,
                    expires_at: expires_in.map(|d| now().plus(d)),
                },
                now(),
            )
            .await?;
            if json {
                let mut value = serde_json::to_value(&record)?;
                value["key"] = serde_json::Value::String(key);
                print_json(&value)
            } else {
                println!(
                    "key {} created; its value is shown only now:\n{key}",
                    record.id
                );
                Ok(())
            }
        }
        KeyAction::List { company, json } => {
            let keys = keys::store::list(db, company).await?;
            if json {
                print_json(&serde_json::json!({ "data": keys }))
            } else {
                for key in keys {
                    println!(
                        "{}  {}…  {}  {}  {}",
                        key.id,
                        key.prefix,
                        key.mode.as_api(),
                        if key.is_active { "active" } else { "inactive" },
                        key.name
                    );
                }
                Ok(())
            }
        }
        KeyAction::Revoke { id } => {
            keys::store::revoke(db, None, id, now()).await?;
            let notice = Notice::for_key(id, None);
            bus.announce(Invalidation::Key(id), Some(notice)).await;
            println!("key {id} revoked");
            Ok(())
        }
    }
}

/// Every company, oldest first: one line each (id, name, status, created),
/// or `{"data": [companies]}`.
async fn list_companies(db: &Db, json: bool) -> anyhow::Result<()> {
    let companies = companies::store::list(db).await?;
    if json {
        return print_json(&serde_json::json!({ "data": companies }));
    }
    for company in companies {
        println!(
            "{}  {}  {}  created {}",
            company.id, company.name, company.status, company.created_at
        );
    }
    Ok(())
}
