// sqlx::migrate! embeds the files under this crate's migrations/ at
// compile time, but cargo only reruns a build when a Rust source changes: a
// new or edited migration alone would leave a binary with the old set.
// Watching the directory makes cargo rebuild when a migration is added or
// changed. (They live inside this crate so that the path cargo records for
// them is relative to it: a build in another checkout of the repository
// reuses this one's instead of rebuilding.)
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
