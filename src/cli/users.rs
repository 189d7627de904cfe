//! `supportdesk users`: agent accounts from the command line — create one
//! with a password read from stdin, invite one, reset a password, list a
//! company's users. Written straight to the database; an emailed link is
//! queued there and sent by a running node's outbox worker, and printed
//! here too for an operator without mail set up.

use std::io::Read;

use clap::Subcommand;
use uuid::Uuid;

use super::BusArgs;
use crate::accounts::password::NewPassword;
use crate::accounts::tokens::{LinkedAccount, TokenKind};
use crate::auth::cache::Invalidation;
use crate::auth::{Mode, Tenant};
use crate::db::Db;
use crate::time::Timestamp;
use crate::users::credentials;
use crate::users::store::{self, NewUser};

/// What `supportdesk users` does.
#[derive(Subcommand)]
pub(super) enum UserAction {
    /// Create a user; with --password-stdin they can sign in at once.
    Create {
        /// The company's id (`supportdesk companies list`).
        #[arg(long)]
        company: Uuid,
        /// The user's email (they sign in with it).
        #[arg(long)]
        email: String,
        /// The name the agent goes by (default: the email's local part).
        #[arg(long)]
        name: Option<String>,
        /// owner, admin, agent or viewer.
        #[arg(long, default_value = "agent")]
        role: String,
        /// Read the password from the first line of stdin.
        #[arg(long)]
        password_stdin: bool,
        /// Print the user as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Email an existing user a link to choose their password (valid 7 days).
    Invite {
        /// The company's id.
        #[arg(long)]
        company: Uuid,
        /// The email of the user to invite.
        #[arg(long)]
        email: String,
        /// The service's public URL, which the link points at.
        #[arg(
            long,
            env = "SUPPORTDESK_PUBLIC_URL",
            default_value = "http://127.0.0.1:8080"
        )]
        public_url: String,
    },
    /// Set a user's password from stdin; every session of theirs ends.
    ResetPassword {
        /// The company's id.
        #[arg(long)]
        company: Uuid,
        /// The email of the user whose password is set.
        #[arg(long)]
        email: String,
    },
    /// List a company's users, newest first.
    List {
        /// The company's id.
        #[arg(long)]
        company: Uuid,
        /// Print `{"data": [users]}` as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

fn now() -> Timestamp {
    Timestamp::now()
}

/// The first line of stdin, as a password that meets the rules.
fn password_from_stdin() -> anyhow::Result<NewPassword> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let line = input.lines().next().unwrap_or("");
    NewPassword::parse(line).map_err(|reason| anyhow::anyhow!("the password {reason}"))
}

async fn hashed(password: NewPassword) -> anyhow::Result<String> {
    tokio::task::spawn_blocking(move || password.hash())
        .await?
        .map_err(|error| anyhow::anyhow!("could not hash the password: {error}"))
}

async fn account_of(
    db: &Db,
    company: Uuid,
    email: &str,
) -> anyhow::Result<credentials::SignInAccount> {
    credentials::account_by_email(db, company, &email.trim().to_lowercase())
        .await?
        .ok_or_else(|| anyhow::anyhow!("no user with email {email} in company {company}"))
}

pub(super) async fn users_command(
    db: &Db,
    bus: &BusArgs,
    action: UserAction,
) -> anyhow::Result<()> {
    match action {
        UserAction::Create {
            company,
            email,
            name,
            role,
            password_stdin,
            json,
        } => {
            let role = crate::roles::BuiltInRole::named(&role)
                .ok_or_else(|| anyhow::anyhow!("--role must be owner, admin, agent or viewer"))?;
            let email = email.trim().to_lowercase();
            let hash = if password_stdin {
                Some(hashed(password_from_stdin()?).await?)
            } else {
                None
            };
            let name = name.unwrap_or_else(|| email.split('@').next().unwrap_or("").to_owned());
            let tenant = Tenant::new(company, Mode::Live);
            let new = NewUser {
                id: None,
                name,
                email,
                role: crate::roles::RoleRef::BuiltIn(role),
            };
            let now = now();
            let mut tx = db.begin().await?;
            let user = store::create_in(&mut tx, &tenant, new, now).await?;
            if let Some(hash) = &hash {
                credentials::set_password_hash(&mut tx, company, user.id, hash, now).await?;
            }
            tx.commit().await?;
            if json {
                println!("{}", serde_json::to_string(&user)?);
            } else {
                println!("user {} ({}, {})", user.id, user.email, user.role_name);
                if hash.is_none() {
                    println!("  no password yet: `supportdesk users invite` sends a link");
                }
            }
            Ok(())
        }
        UserAction::Invite {
            company,
            email,
            public_url,
        } => {
            let account = account_of(db, company, &email).await?;
            let linked = LinkedAccount {
                company_id: company,
                user_id: account.id,
            };
            let url = public_url.trim_end_matches('/');
            let link = crate::accounts::links::send_link(
                db,
                url,
                now(),
                linked,
                &account.email,
                TokenKind::Invitation,
            )
            .await?;
            println!(
                "invitation queued for {}; its link (valid 7 days, once):",
                account.email
            );
            println!("  {link}");
            Ok(())
        }
        UserAction::ResetPassword { company, email } => {
            let account = account_of(db, company, &email).await?;
            let hash = hashed(password_from_stdin()?).await?;
            let now = now();
            let mut tx = db.begin().await?;
            credentials::set_password_hash(&mut tx, company, account.id, &hash, now).await?;
            crate::accounts::sessions::end_all_of_user(&mut tx, account.id, None, now).await?;
            tx.commit().await?;
            bus.announce(Invalidation::User(account.id), None).await;
            println!("password set for {}; their sessions ended", account.email);
            Ok(())
        }
        UserAction::List { company, json } => {
            let (users, _) = store::list(db, company, 1000, 0).await?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string(&serde_json::json!({ "data": users }))?
                );
            } else {
                for user in users {
                    println!(
                        "{}  {}  {}  {}",
                        user.id,
                        user.role.as_str(),
                        user.email,
                        user.name
                    );
                }
            }
            Ok(())
        }
    }
}
