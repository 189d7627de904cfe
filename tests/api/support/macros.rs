//! `backend_tests!` and `postgres_tests!`: each test function run once per
//! backend it applies to, as `name::sqlite` and `name::postgres`.

#[macro_export]
macro_rules! backend_tests {
    ($($name:ident),+ $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::$name($crate::support::Backend::Sqlite).await
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(backend) =
                        $crate::support::Backend::postgres(concat!(module_path!(), "::postgres"))
                    {
                        super::$name(backend).await
                    }
                }
            }
        )+
    };
}

/// Postgres-only tests, for what SQLite cannot show (concurrent writers,
/// a server cutting connections): skipped without Postgres, failed in CI.
#[macro_export]
macro_rules! postgres_tests {
    ($($name:ident),+ $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(backend) =
                        $crate::support::Backend::postgres(concat!(module_path!(), "::postgres"))
                    {
                        super::$name(backend).await
                    }
                }
            }
        )+
    };
}
