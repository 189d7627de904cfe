use clap::Parser;

// Opt-in: the bench compares a binary built with it against the default one
// before the default changes.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    supportdesk::telemetry::init();
    supportdesk::cli::run(supportdesk::cli::Cli::parse()).await
}
