// sqlx::migrate! embeds the files under the workspace's migrations/ at
// compile time, but cargo only reruns a build when a Rust source changes: a
// new or edited migration alone would leave a binary with the old set.
// Watching the directory makes cargo rebuild when a migration is added or
// changed.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
