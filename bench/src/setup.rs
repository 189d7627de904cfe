//! Seeding: the benchmark company, entity and key through the service's CLI,
//! then the bulk data with `INSERT … SELECT generate_series` through psql.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;

/// The ids and key the scenarios use.
#[derive(Clone, Debug)]
pub struct Seed {
    pub company: String,
    pub entity: String,
    pub key: String,
    /// The 10,000 agents (users) of the benchmark company.
    pub agents: Vec<String>,
    /// Whether the tickets / KB tables exist and were seeded.
    pub tickets: Option<u64>,
    /// The tags and custom field values the tickets seed gave them (when
    /// their tables exist).
    pub ticket_tags: Option<u64>,
    pub field_values: Option<u64>,
    pub articles: Option<u64>,
}

pub async fn cli_json(
    bin: &Path,
    database_url: &str,
    args: &[&str],
) -> anyhow::Result<serde_json::Value> {
    let output = tokio::process::Command::new(bin)
        .args(args)
        .arg("--json")
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "warn")
        .output()
        .await
        .with_context(|| format!("running {} {}", bin.display(), args.join(" ")))?;
    anyhow::ensure!(
        output.status.success(),
        "{} {} failed: {}",
        bin.display(),
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .context("no JSON line in the CLI's output")?;
    Ok(serde_json::from_str(line)?)
}

/// Runs SQL through psql (`-c` text or `-f` file) with `-v` variables; returns stdout.
pub async fn psql(
    database_url: &str,
    sql: Sql<'_>,
    vars: &[(&str, &str)],
) -> anyhow::Result<String> {
    let mut command = tokio::process::Command::new("psql");
    command
        .arg(database_url)
        .arg("--no-psqlrc")
        .arg("-v")
        .arg("ON_ERROR_STOP=1")
        .arg("-qtA");
    for (name, value) in vars {
        command.arg("-v").arg(format!("{name}={value}"));
    }
    match sql {
        Sql::Text(text) => command.arg("-c").arg(text),
        Sql::File(path) => command.arg("-f").arg(path),
    };
    let output = command.output().await.context("running psql")?;
    anyhow::ensure!(
        output.status.success(),
        "psql failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

pub enum Sql<'a> {
    Text(&'a str),
    File(&'a Path),
}

pub async fn table_exists(database_url: &str, table: &str) -> anyhow::Result<bool> {
    let out = psql(
        database_url,
        Sql::Text(&format!("SELECT to_regclass('{table}') IS NOT NULL")),
        &[],
    )
    .await?;
    Ok(out == "t")
}

pub async fn seed(bin: &Path, database_url: &str, sql_dir: &Path) -> anyhow::Result<Seed> {
    let started = Instant::now();
    // The CLI applies the migrations on connect.
    let Tenant {
        company,
        entity,
        key,
    } = create_tenant(bin, database_url, "Bench company 1").await?;
    let vars = [("company", company.as_str()), ("entity", entity.as_str())];
    psql(
        database_url,
        Sql::File(&sql_dir.join("seed_core.sql")),
        &vars,
    )
    .await?;
    let agents: Vec<String> = psql(
        database_url,
        Sql::Text(&format!(
            "SELECT id FROM users WHERE company_id = '{company}' AND email LIKE 'agent%@bench.example' ORDER BY substring(name from 7)::int"
        )),
        &[],
    )
    .await?
    .lines()
    .map(String::from)
    .collect();
    eprintln!(
        "  seeded 50 companies and {} agents ({:.1} s)",
        agents.len(),
        started.elapsed().as_secs_f64()
    );

    let tickets =
        seed_optional(database_url, sql_dir, "tickets", "seed_tickets.sql", &vars).await?;
    let (ticket_tags, field_values) = match tickets {
        Some(_) => (
            count_rows(database_url, "ticket_tags").await?,
            count_rows(database_url, "ticket_field_values").await?,
        ),
        None => (None, None),
    };
    eprintln!(
        "  the tickets carry {} tags and {} custom field values",
        ticket_tags.unwrap_or(0),
        field_values.unwrap_or(0)
    );
    let articles =
        seed_optional(database_url, sql_dir, "kb_articles", "seed_kb.sql", &vars).await?;
    // Steady state, as autovacuum leaves a live database: statistics, and
    // the visibility map that lets counts be index-only scans.
    psql(database_url, Sql::Text("VACUUM ANALYZE"), &[]).await?;
    // Flush the seed's writes now rather than in a checkpoint during a
    // measurement (its fsyncs stall every transaction for a while).
    psql(database_url, Sql::Text("CHECKPOINT"), &[]).await?;
    Ok(Seed {
        company,
        entity,
        key,
        agents,
        tickets,
        ticket_tags,
        field_values,
        articles,
    })
}

/// A company with one entity and a live key of every scope, made with the
/// service's CLI.
#[derive(Clone)]
pub struct Tenant {
    pub company: String,
    pub entity: String,
    pub key: String,
}

pub async fn create_tenant(bin: &Path, database_url: &str, name: &str) -> anyhow::Result<Tenant> {
    let company = cli_json(bin, database_url, &["companies", "create", "--name", name]).await?;
    let company = company["id"].as_str().context("company id")?.to_string();
    let entity_name = format!("{name} entity");
    let entity = cli_json(
        bin,
        database_url,
        &[
            "entities",
            "create",
            "--company",
            &company,
            "--name",
            &entity_name,
        ],
    )
    .await?;
    let entity = entity["id"].as_str().context("entity id")?.to_string();
    // A rate limit far above what the benchmark sends, so the limiter is
    // exercised (one GCRA step per request) but never refuses.
    let key = cli_json(
        bin,
        database_url,
        &[
            "keys",
            "create",
            "--company",
            &company,
            "--type",
            "live",
            "--scopes",
            "all",
            "--rate-limit",
            "1000000000",
            "--name",
            "bench",
        ],
    )
    .await?;
    let key = key["key"].as_str().context("key")?.to_string();
    Ok(Tenant {
        company,
        entity,
        key,
    })
}

/// The rows of `table`, None when it does not exist.
async fn count_rows(database_url: &str, table: &str) -> anyhow::Result<Option<u64>> {
    if !table_exists(database_url, table).await? {
        return Ok(None);
    }
    let count = psql(
        database_url,
        Sql::Text(&format!("SELECT count(*) FROM {table}")),
        &[],
    )
    .await?
    .parse()?;
    Ok(Some(count))
}

/// Runs `file` when `table` exists; returns its row count afterwards.
async fn seed_optional(
    database_url: &str,
    sql_dir: &Path,
    table: &str,
    file: &str,
    vars: &[(&str, &str)],
) -> anyhow::Result<Option<u64>> {
    if !table_exists(database_url, table).await? {
        eprintln!("  table {table} does not exist (area not merged yet): not seeded");
        return Ok(None);
    }
    let started = Instant::now();
    let path: PathBuf = sql_dir.join(file);
    psql(database_url, Sql::File(&path), vars).await?;
    let count: u64 = psql(
        database_url,
        Sql::Text(&format!("SELECT count(*) FROM {table}")),
        &[],
    )
    .await?
    .parse()?;
    eprintln!(
        "  seeded {count} rows of {table} ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(Some(count))
}
