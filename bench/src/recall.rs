//! `sdbench recall`: retrieval quality, not speed. Stores the demo shop's
//! knowledge base (`bench/kb/articles.json`) and its synonym groups
//! (`synonyms.json`) in a fresh service, asks every labelled question of
//! `questions.json` of today's search (`GET /api/v1/kb/search`) and of the
//! retrieval tuned for questions (`GET /api/v1/kb/suggest`), and reports
//! recall@1 and recall@3 per question class as a markdown section.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use hyper::StatusCode;
use serde::Deserialize;
use serde_json::json;

use crate::http::{Conn, Req};
use crate::process::{Server, ServiceConfig};
use crate::setup::create_tenant;

#[derive(clap::Args)]
pub struct RecallArgs {
    /// The service's binary (a debug build will do).
    #[arg(long)]
    service_bin: PathBuf,
    /// A fresh, empty database; default a new SQLite file in --out-dir.
    #[arg(long)]
    database_url: Option<String>,
    /// The knowledge base, its synonyms and the labelled questions.
    #[arg(long, default_value = "bench/kb")]
    kb_dir: PathBuf,
    /// Logs and the SQLite file.
    #[arg(long, default_value = "bench/out/recall")]
    out_dir: PathBuf,
    /// Prints each question whose right article neither finds first.
    #[arg(long)]
    verbose: bool,
}

#[derive(Deserialize)]
struct Article {
    slug: String,
    title: String,
    content: String,
}

#[derive(Deserialize)]
struct Question {
    class: String,
    article: String,
    question: String,
}

/// Hits of the right article at rank 1 and within the first 3.
#[derive(Default, Clone, Copy)]
struct Tally {
    at1: u32,
    at3: u32,
}

impl Tally {
    fn add(&mut self, rank: Option<usize>) {
        self.at1 += u32::from(rank == Some(0));
        self.at3 += u32::from(rank.is_some_and(|r| r < 3));
    }
}

#[derive(Default)]
struct Class {
    questions: u32,
    search: Tally,
    suggest: Tally,
}

pub async fn run(args: RecallArgs) -> anyhow::Result<()> {
    let read = |name: &str| -> anyhow::Result<String> {
        let path = args.kb_dir.join(name);
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
    };
    let articles: Vec<Article> = serde_json::from_str(&read("articles.json")?)?;
    let synonyms: serde_json::Value = serde_json::from_str(&read("synonyms.json")?)?;
    let questions: Vec<Question> = serde_json::from_str(&read("questions.json")?)?;
    std::fs::create_dir_all(&args.out_dir)?;
    let out_dir = std::fs::canonicalize(&args.out_dir)?;
    let database_url = match &args.database_url {
        Some(url) => url.clone(),
        None => {
            let file = out_dir.join("recall.db");
            let _ = std::fs::remove_file(&file);
            format!("sqlite://{}?mode=rwc", file.display())
        }
    };
    let tenant = create_tenant(&args.service_bin, &database_url, "Teapot Emporium").await?;
    let config = ServiceConfig {
        bin: args.service_bin.clone(),
        database_url: database_url.clone(),
        redis_url: None,
        redis_prefix: "recall:".into(),
        data_dir: out_dir.join("data"),
        presence_ttl_secs: None,
        metrics: false,
    };
    let server = Server::service("recall", &config, &out_dir).await?;
    let result = measure(
        &server,
        &tenant,
        &articles,
        &synonyms,
        &questions,
        args.verbose,
    )
    .await;
    server.stop().await;
    let classes = result?;
    println!("{}", report(&classes, &database_url, &args.kb_dir));
    let worse: Vec<&String> = classes
        .iter()
        .filter(|(_, c)| c.suggest.at1 < c.search.at1 || c.suggest.at3 < c.search.at3)
        .map(|(name, _)| name)
        .collect();
    anyhow::ensure!(
        worse.is_empty(),
        "the tuned retrieval is worse on {worse:?}"
    );
    Ok(())
}

async fn measure(
    server: &Server,
    tenant: &crate::setup::Tenant,
    articles: &[Article],
    synonyms: &serde_json::Value,
    questions: &[Question],
    verbose: bool,
) -> anyhow::Result<BTreeMap<String, Class>> {
    let mut conn = Conn::open(0, server.addr).await?;
    for article in articles {
        let body = json!({
            "entityId": tenant.entity, "title": article.title, "slug": article.slug,
            "content": article.content, "isPublished": true,
        });
        let req = Req::post_json("/api/v1/kb/articles", &body).key(&tenant.key);
        conn.json(&req, StatusCode::CREATED).await?;
    }
    let body = serde_json::to_vec(&json!({ "groups": synonyms }))?;
    let req = Req {
        method: hyper::Method::PUT,
        path: "/api/v1/kb/synonyms".into(),
        headers: vec![("content-type", "application/json".into())],
        body: Some(body.into()),
    }
    .key(&tenant.key);
    conn.json(&req, StatusCode::OK).await?;
    let mut classes: BTreeMap<String, Class> = BTreeMap::new();
    for q in questions {
        let search = ranked(&mut conn, tenant, "search", &q.question).await?;
        let suggest = ranked(&mut conn, tenant, "suggest", &q.question).await?;
        let rank_of = |slugs: &[String]| slugs.iter().position(|s| *s == q.article);
        let class = classes.entry(q.class.clone()).or_default();
        class.questions += 1;
        class.search.add(rank_of(&search));
        class.suggest.add(rank_of(&suggest));
        if verbose && (rank_of(&search) != Some(0) || rank_of(&suggest) != Some(0)) {
            eprintln!(
                "[{}] {:?} → {}: search {:?}, suggest {:?}",
                q.class, q.question, q.article, search, suggest
            );
        }
    }
    Ok(classes)
}

/// The slugs of the first three hits of `/kb/{endpoint}` for `text`.
async fn ranked(
    conn: &mut Conn,
    tenant: &crate::setup::Tenant,
    endpoint: &str,
    text: &str,
) -> anyhow::Result<Vec<String>> {
    let path = format!(
        "/api/v1/kb/{endpoint}?entityId={}&limit=3&q={}",
        tenant.entity,
        encode(text)
    );
    let hits = conn
        .json(&Req::get(path).key(&tenant.key), StatusCode::OK)
        .await?;
    Ok(hits
        .as_array()
        .context("a list of hits")?
        .iter()
        .filter_map(|hit| hit["slug"].as_str().map(str::to_string))
        .collect())
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn percent(hits: u32, of: u32) -> String {
    format!("{:.0}%", 100.0 * f64::from(hits) / f64::from(of.max(1)))
}

fn report(classes: &BTreeMap<String, Class>, database_url: &str, kb_dir: &Path) -> String {
    let backend = database_url.split(':').next().unwrap_or("?");
    let mut out = String::from(
        "| class | questions | search recall@1 | suggest recall@1 | search recall@3 | suggest recall@3 |\n\
         |---|---|---|---|---|---|\n",
    );
    let mut all = Class::default();
    for (name, c) in classes {
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} |\n",
            c.questions,
            percent(c.search.at1, c.questions),
            percent(c.suggest.at1, c.questions),
            percent(c.search.at3, c.questions),
            percent(c.suggest.at3, c.questions),
        ));
        all.questions += c.questions;
        for (sum, part) in [(&mut all.search, c.search), (&mut all.suggest, c.suggest)] {
            sum.at1 += part.at1;
            sum.at3 += part.at3;
        }
    }
    out.push_str(&format!(
        "| **all** | {} | {} | {} | {} | {} |\n\n({backend}, questions and articles in {})",
        all.questions,
        percent(all.search.at1, all.questions),
        percent(all.suggest.at1, all.questions),
        percent(all.search.at3, all.questions),
        percent(all.suggest.at3, all.questions),
        kb_dir.display(),
    ));
    out
}
