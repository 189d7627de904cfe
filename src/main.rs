use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    supportdesk::telemetry::init();
    supportdesk::cli::run(supportdesk::cli::Cli::parse()).await
}
