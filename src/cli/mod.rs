//! The command line: `serve` (default), `migrate`, and administration of
//! companies, entities, users and keys; a contact's export. `--json` prints
//! one JSON object on stdout.

mod admin;
pub mod audit;
mod contacts;
mod users;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::app::App;
use crate::auth::cache::{self, Invalidation};
use crate::config::{Config, ServeArgs};
use crate::db::Db;
use crate::realtime::bus::Bus;
use crate::realtime::credentials::{self, Notice};
use admin::{CompanyAction, EntityAction, KeyAction};

#[derive(Parser)]
#[command(name = "supportdesk", version, about = "Customer-support desk service")]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service (the default).
    // Boxed: its settings outweigh every other command's arguments.
    Serve(Box<ServeArgs>),
    /// Apply database migrations and exit.
    Migrate(DbArgs),
    /// Manage companies: create, list, suspend, activate.
    Companies {
        #[command(flatten)]
        db: DbArgs,
        #[command(flatten)]
        bus: BusArgs,
        #[command(subcommand)]
        action: CompanyAction,
    },
    /// Manage entities: create.
    Entities {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        action: EntityAction,
    },
    /// Manage agent accounts: create, invite, reset-password, list.
    Users {
        #[command(flatten)]
        db: DbArgs,
        #[command(flatten)]
        bus: BusArgs,
        #[command(subcommand)]
        action: users::UserAction,
    },
    /// The audit log: verify a company's chain, prune its start.
    Audit {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        action: audit::AuditAction,
    },
    /// A person's data: export everything stored about a contact.
    Contacts {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        action: contacts::ContactAction,
    },
    /// Manage API keys: create, list, revoke.
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
    /// `postgres://…` or `sqlite:…`; default: the SQLite file in the data
    /// directory.
    #[arg(long, env = "DATABASE_URL", global = true)]
    database_url: Option<String>,
    /// Where the default SQLite file lives.
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
    /// The nodes' Redis, to tell them of the change at once.
    #[arg(long, env = "REDIS_URL", global = true)]
    redis_url: Option<String>,
    /// The nodes' Redis key prefix.
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
                // Key notices (their company is not at hand here); the CLI
                // sends no visitor notices.
                Notice::KeyEnded { .. }
                | Notice::KeyValid { .. }
                | Notice::SessionEnded { .. }
                | Notice::SessionValid { .. }
                | Notice::SessionScopeRemoved { .. }
                | Notice::VisitorTokensRevoked { .. }
                | Notice::IdentitySecretRotated { .. } => None,
            };
            credentials::publish(&bus, company_id, notice).await;
        }
    }
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
            admin::companies_command(&db.connect().await?, &bus, action).await
        }
        Command::Entities { db, action } => {
            admin::entities_command(&db.connect().await?, action).await
        }
        Command::Users { db, bus, action } => {
            users::users_command(&db.connect().await?, &bus, action).await
        }
        Command::Audit { db, action } => audit::audit_command(&db.connect().await?, action).await,
        Command::Contacts { db, action } => {
            contacts::contacts_command(&db.connect().await?, &db.data_dir, action).await
        }
        Command::Keys { db, bus, action } => {
            admin::keys_command(&db.connect().await?, &bus, action).await
        }
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
        println!(
            "  Admin sign-in (shown once): {} / {}",
            demo.owner_email, demo.owner_password
        );
        println!(
            "    at {}{} with \"Work on TEST data\" ticked (the demo's data is TEST)",
            app.state().public_url,
            crate::console::PATH
        );
        // The demo's pages are served only with the demo enabled.
        if app.shop_url().is_some() {
            println!("  Demo:           {}", demo.demo_url);
            println!("  Visitor widget: {}", demo.visitor_url);
        } else {
            println!("  (start with --demo for the demo shop and visitor page)");
        }
    }
    if let Some(shop) = app.shop_url() {
        println!("  Demo shop (the widget on another origin): {shop}/");
    }
    let public_url = app.state().public_url.clone();
    for line in crate::home::startup_lines(&public_url) {
        println!("{line}");
    }
    tracing::info!(url = %public_url, "supportdesk listening");
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// Every command and argument of `--help` says what it is for.
    #[test]
    fn every_command_and_argument_has_a_help_line() {
        fn check(command: &clap::Command, path: &str) {
            for sub in command.get_subcommands() {
                let name = format!("{path} {}", sub.get_name());
                assert!(sub.get_about().is_some(), "{name} has a help line");
                check(sub, &name);
            }
            for arg in command.get_arguments() {
                let builtin = matches!(arg.get_id().as_str(), "help" | "version");
                assert!(
                    builtin || arg.get_help().is_some(),
                    "{path} --{} has a help line",
                    arg.get_id()
                );
            }
        }
        check(&Cli::command(), "supportdesk");
    }
}
