//! `sdbench soak --duration 30m …`: one service process on Postgres + Redis
//! under a mixed load for a long time, sampled every 10 s, judged on
//! growth (memory, descriptors, tables), errors and the outbox draining,
//! written to bench/SOAK.md with a PNG of the series.

mod load;
mod plot;
mod receiver;
mod report;
mod sample;
mod vacuum;
mod verdict;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::process::{Server, ServiceConfig};
use crate::setup;
use load::{Counters, Mix};
use sample::Sample;

#[derive(clap::Args)]
pub struct SoakArgs {
    /// How long the load runs: `90s`, `10m`, `30m`, `1h`.
    #[arg(long, value_parser = parse_duration)]
    pub duration: Duration,
    #[arg(long)]
    pub service_bin: PathBuf,
    /// A fresh, empty database (run.sh creates and drops it).
    #[arg(long)]
    pub database_url: String,
    #[arg(long)]
    pub redis_url: String,
    #[arg(long)]
    pub redis_prefix: String,
    #[arg(long)]
    pub sql_dir: PathBuf,
    /// soak.csv, the service's log and data dir.
    #[arg(long)]
    pub out_dir: PathBuf,
    /// Where to write the markdown report; the PNG goes beside it.
    #[arg(long)]
    pub report: PathBuf,
    /// Sockets in all, half agents and half visitors (one chat each pair).
    #[arg(long, default_value_t = 2_000)]
    pub sockets: usize,
    #[arg(long, default_value_t = 10)]
    pub sample_secs: u64,
    #[arg(long, default_value = "unknown")]
    pub commit: String,
    #[arg(long, default_value = "bench/run.sh --soak")]
    pub command: String,
}

/// `90s`, `10m`, `2h`, or plain seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (digits, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let count: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 90s, 10m or 1h"))?;
    let secs = match unit {
        "" | "s" => count,
        "m" => count * 60,
        "h" => count * 3600,
        _ => return Err(format!("`{text}`: the unit is s, m or h")),
    };
    Ok(Duration::from_secs(secs))
}

/// Growth is measured against the samples at this point of the run: five
/// minutes, or a third of a shorter run (development soaks).
fn baseline_after(duration: Duration) -> Duration {
    Duration::from_secs(300).min(duration / 3)
}

/// The longest wait for the outbox to drain once the load stops: the
/// retries' delays add up to 15 s, so this is far beyond a healthy drain.
const DRAIN_LIMIT: Duration = Duration::from_secs(180);

pub async fn run(args: SoakArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.out_dir)?;
    let load_average_before = sample::load_average();
    // Without autovacuum nothing reclaims what retention deletes; say so.
    let autovacuum = setup::psql(&args.database_url, setup::Sql::Text("SHOW autovacuum"), &[])
        .await
        .unwrap_or_else(|_| "?".into());
    eprintln!("== seeding {}", args.database_url);
    let seed = setup::seed(&args.service_bin, &args.database_url, &args.sql_dir).await?;
    let hooks = receiver::start().await?;
    let config = ServiceConfig {
        bin: args.service_bin.clone(),
        database_url: args.database_url.clone(),
        redis_url: Some(args.redis_url.clone()),
        redis_prefix: args.redis_prefix.clone(),
        data_dir: args.out_dir.join("data"),
        presence_ttl_secs: None,
        metrics: false,
    };
    // Retention with no age at all, every 30 s: finished deliveries, their
    // attempts and events go at the next pass, so those tables reach a
    // steady size within the run. Short retries so failed deliveries finish.
    let env = [
        ("SUPPORTDESK_RETENTION_DAYS", "0".to_string()),
        ("SUPPORTDESK_RETENTION_INTERVAL_SECS", "30".to_string()),
        ("SUPPORTDESK_WEBHOOK_ALLOW_PRIVATE", "true".to_string()),
        ("SUPPORTDESK_WEBHOOK_RETRY_DELAYS", "1,2,4,8".to_string()),
    ];
    let server =
        Server::service_with_env("soak-service", &config, &env, &args.out_dir.join("logs")).await?;
    let counters = Arc::new(Counters::default());
    let mix = Mix::prepare(&server, &seed, args.sockets, hooks.url(), &counters).await?;
    eprintln!(
        "== {} chats ready; load for {} s",
        mix.chats(),
        args.duration.as_secs()
    );

    let csv_path = args.out_dir.join("soak.csv");
    let mut sampler = sample::Sampler::new(&server, &args, &csv_path).await?;
    let load = mix
        .start(server.addr, args.duration, counters.clone())
        .await;
    eprintln!(
        "== {} sockets subscribed; the clock starts",
        Counters::get(&counters.connected)
    );
    let started = Instant::now();
    let mut samples: Vec<Sample> = Vec::new();
    let every = Duration::from_secs(args.sample_secs.max(1));
    let mut next = tokio::time::Instant::now();
    let vacuum = Arc::new(vacuum::Vacuum::default());
    while started.elapsed() < args.duration {
        tokio::time::sleep_until(next).await;
        next += every;
        if autovacuum.trim() == "off" {
            vacuum.tick(&args.database_url);
        }
        let sample = sampler.take(started.elapsed(), &counters, &hooks).await?;
        eprintln!("  {}", sample.summary());
        samples.push(sample);
    }
    // The last sample while the sockets are still open, then the stop.
    let final_sample = sampler.take(started.elapsed(), &counters, &hooks).await?;
    samples.push(final_sample);
    load.stop().await;
    let drain = sampler.wait_for_drain(DRAIN_LIMIT).await?;
    eprintln!("== outbox after the load: {drain:?}");
    let load_average_after = sample::load_average();
    server.stop().await;

    let baseline = baseline_after(args.duration);
    let verdicts = verdict::judge(&samples, baseline, &drain, &counters);
    let png = args.report.with_extension("png");
    plot::draw(&samples, baseline, &png)?;
    let doc = report::document(&report::Inputs {
        args: &args,
        samples: &samples,
        verdicts: &verdicts,
        baseline,
        drain: &drain,
        counters: &counters,
        webhooks: hooks.counts(),
        png: &png,
        csv: &csv_path,
        load_average: (load_average_before, load_average_after),
        machine: crate::machine().await,
        autovacuum,
        vacuum: vacuum.counts(),
    });
    std::fs::write(&args.report, doc)?;
    for v in &verdicts {
        println!("{}: {}", if v.pass { "PASS" } else { "FAIL" }, v.line());
    }
    eprintln!(
        "== wrote {}, {} and {}",
        args.report.display(),
        png.display(),
        csv_path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn minutes_read_as_sixty_seconds_each() {
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
    }

    #[test]
    fn an_unknown_unit_is_refused() {
        assert!(parse_duration("30x").is_err());
    }
}
