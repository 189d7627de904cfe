use clap::Parser;

// jemalloc: a request's many short-lived allocations cost it a tenth to a
// quarter less CPU than with glibc's allocator, at the same memory per idle
// socket (docs/operations.md, "Allocator").
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    supportdesk::telemetry::init();
    supportdesk::cli::run(supportdesk::cli::Cli::parse()).await
}
