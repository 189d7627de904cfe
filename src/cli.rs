//! The command line: `serve` (default), `migrate`, and administration of
//! companies, entities and keys. `--json` prints one JSON object on stdout.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use uuid::Uuid;

use crate::app::App;
use crate::auth::cache::{self, Invalidation};
use crate::auth::{Mode, ScopeSet};
use crate::config::{Config, ServeArgs};
use crate::db::Db;
use crate::keys::{self, NewKey};
use crate::realtime::bus::Bus;
use crate::realtime::credentials::{self, Notice};
use crate::time::Timestamp;
use crate::{companies, entities};

#[derive(Parser)]
#[command(name = "supportdesk", version, about = "Customer-support desk service")]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service (the default). Boxed: its settings outweigh every
    /// other command's arguments.
    Serve(Box<ServeArgs>),
    /// Apply database migrations and exit.
    Migrate(DbArgs),
    /// Manage companies.
    Companies {
        #[command(flatten)]
        db: DbArgs,
        #[command(flatten)]
        bus: BusArgs,
        #[command(subcommand)]
        action: CompanyAction,
    },
    /// Manage entities.
    Entities {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        action: EntityAction,
    },
    /// Manage API keys.
    Keys {
        #[command(flatten)]
        db: DbArgs,
        #[command(flatten)]
        bus: BusArgs,
        #[command(subcommand)]
        action: KeyAction,
    },
}

#[derive(Args)]
struct DbArgs {
    #[arg(long, env = "DATABASE_URL", global = true)]
    database_url: Option<String>,
    #[arg(
        long,
        env = "SUPPORTDESK_DATA_DIR",
        default_value = "data",
        global = true
    )]
    data_dir: PathBuf,
}

impl DbArgs {
    async fn connect(&self) -> anyhow::Result<Db> {
        let url = match &self.database_url {
            Some(url) => url.clone(),
            None => {
                std::fs::create_dir_all(&self.data_dir)?;
                format!(
                    "sqlite://{}/supportdesk.db?mode=rwc",
                    self.data_dir.display()
                )
            }
        };
        let db = Db::connect(&url).await?;
        db.migrate().await?;
        Ok(db)
    }
}

/// The running nodes' bus, to tell them of a change at once. Without Redis
/// they notice it by themselves within the key cache's 10 s.
#[derive(Args)]
struct BusArgs {
    #[arg(long, env = "REDIS_URL", global = true)]
    redis_url: Option<String>,
    #[arg(long, env = "SUPPORTDESK_REDIS_PREFIX", default_value = crate::config::defaults::REDIS_PREFIX, global = true)]
    redis_prefix: String,
}

impl BusArgs {
    /// Publishes `notice` and the matching key-cache invalidation, if there
    /// is a Redis to publish on.
    async fn announce(&self, invalidation: Invalidation, notice: Option<Notice>) {
        let Some(url) = self.redis_url.as_deref().filter(|u| !u.is_empty()) else {
            return;
        };
        let bus = match Bus::redis(url, &self.redis_prefix).await {
            Ok(bus) => bus,
            Err(error) => {
                eprintln!(
                    "warning: could not reach Redis ({error}); nodes apply the change within 10 s"
                );
                return;
            }
        };
        bus.publish(cache::TOPIC, invalidation.encode()).await;
        if let Some(notice) = notice {
            let company_id = match notice {
                Notice::CompanySuspended { company_id } => Some(company_id),
                Notice::KeyEnded { .. } | Notice::KeyValid { .. } => None,
            };
            credentials::publish(&bus, company_id, notice).await;
        }
    }
}

#[derive(Subcommand)]
enum CompanyAction {
    Create {
        #[arg(long)]
        name: String,
        #[arg(long)]
        json: bool,
    },
    Suspend {
        id: Uuid,
    },
    Activate {
        id: Uuid,
    },
}

#[derive(Subcommand)]
enum EntityAction {
    Create {
        #[arg(long)]
        company: Uuid,
        #[arg(long)]
        name: String,
        #[arg(long)]
        parent: Option<Uuid>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum KeyAction {
    Create {
        #[arg(long)]
        company: Uuid,
        #[arg(long = "type", value_parser = ["test", "live"])]
        mode: String,
        /// Comma-separated scopes, or `all`.
        #[arg(long, default_value = "all")]
        scopes: String,
        #[arg(long, default_value_t = keys::store::DEFAULT_RATE_LIMIT)]
        rate_limit: i64,
        /// Lifetime such as `30d`, `12h`, `15m`, `45s`.
        #[arg(long, value_parser = crate::time::parse_duration)]
        expires_in: Option<Duration>,
        #[arg(long, default_value = "CLI key")]
        name: String,
        #[arg(long)]
        json: bool,
    },
    List {
        #[arg(long)]
        company: Uuid,
        #[arg(long)]
        json: bool,
    },
    Revoke {
        id: Uuid,
    },
}

fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string(value)?);
    Ok(())
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let command = match cli.command {
        Some(command) => command,
        None => Command::Serve(Box::new(ServeOnly::parse_from(["supportdesk"]).args)),
    };
    match command {
        Command::Serve(args) => serve(*args).await,
        Command::Migrate(db) => {
            db.connect().await?;
            eprintln!("migrations applied");
            Ok(())
        }
        Command::Companies { db, bus, action } => {
            companies_command(&db.connect().await?, &bus, action).await
        }
        Command::Entities { db, action } => entities_command(&db.connect().await?, action).await,
        Command::Keys { db, bus, action } => keys_command(&db.connect().await?, &bus, action).await,
    }
}

#[derive(Parser)]
struct ServeOnly {
    #[command(flatten)]
    args: ServeArgs,
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.data_dir)?;
    let config = Config::from_args(args)?;
    let app = App::build(config).await?;
    if let Some(demo) = &app.demo {
        println!("Created the demo company on this empty database.");
        println!("  TEST API key (shown once): {}", demo.key);
        // The demo's pages are served only with the demo enabled.
        if app.shop_url().is_some() {
            println!("  Demo:           {}", demo.demo_url);
            println!("  Visitor widget: {}", demo.visitor_url);
        } else {
            println!("  (start with --demo for the demo shop, visitor page and agent console)");
        }
    }
    if let Some(shop) = app.shop_url() {
        println!("  Demo shop (the widget on another origin): {shop}/");
    }
    tracing::info!(url = %app.state().public_url, "supportdesk listening");
    let handle = app.shutdown_handle();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down: finishing in-flight requests");
        handle.trigger();
    });
    app.run_until_stopped().await
}

async fn wait_for_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// The CLI's time: it runs outside any node, so the wall clock.
fn now() -> Timestamp {
    Timestamp::now()
}

async fn companies_command(db: &Db, bus: &BusArgs, action: CompanyAction) -> anyhow::Result<()> {
    let (company, json) = match action {
        CompanyAction::Create { name, json } => {
            (companies::store::create(db, &name, now()).await?, json)
        }
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

async fn entities_command(db: &Db, action: EntityAction) -> anyhow::Result<()> {
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

async fn keys_command(db: &Db, bus: &BusArgs, action: KeyAction) -> anyhow::Result<()> {
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
            keys::store::revoke(db, None, id).await?;
            let notice = Notice::for_key(id, None);
            bus.announce(Invalidation::Key(id), Some(notice)).await;
            println!("key {id} revoked");
            Ok(())
        }
    }
}
