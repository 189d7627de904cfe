//! The application: shared state, the router with its middleware, the
//! background workers, and graceful shutdown. `App::build` binds the listener
//! so tests can start the real service on port 0.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use metrics_exporter_prometheus::PrometheusHandle;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::bootstrap::{self, DemoCreated};
use crate::client_address::{ClientAddress, TrustedProxies};
use crate::config::Config;
use crate::db::Db;
use crate::router::{ApiRouter, RouteSpec};
use crate::state::{AppState, SharedState};

mod stack;

pub use stack::layered;
use stack::router;

/// Every `/api/v1` route with its scope, from the area routers.
pub fn api_routes() -> ApiRouter {
    ApiRouter::new()
        .merge(crate::entities::routes::router())
        .merge(crate::widget::secret::router())
        .merge(crate::widget::revoke::router())
        .merge(crate::users::routes::router())
        .merge(crate::roles::routes::router())
        .merge(crate::keys::routes::router())
        .merge(crate::audit::routes::router())
        .merge(crate::webhooks::routes::router())
        .merge(crate::tickets::routes::router())
        .merge(crate::tags::routes::router())
        .merge(crate::macros::routes::router())
        .merge(crate::automations::routes::router())
        .merge(crate::views::routes::router())
        .merge(crate::teams::routes::router())
        .merge(crate::chat::routes::router())
        .merge(crate::kb::routes::router())
        .merge(crate::settings::routes::router())
        .merge(crate::sso::routes::router())
        .merge(crate::sla::routes::router())
        .merge(crate::custom_fields::routes::router())
        .merge(crate::reports::routes::router())
        .merge(crate::csat::routes::router())
        .merge(crate::changes::routes::router())
        .merge(crate::attachments::routes::router())
        .merge(crate::contacts::routes::router())
        .merge(crate::contacts::organizations::router())
        .merge(crate::contacts::requests::router())
        .merge(crate::email::routes::router())
        .merge(crate::retention::routes::router())
}

/// The route table (method, path, scope) of the whole API.
pub fn api_route_specs() -> Vec<RouteSpec> {
    api_routes().into_parts().2
}

/// The schema names two different schemas were registered under, across
/// the API's and the widget's handlers (see `openapi::schema_collisions`):
/// empty when every schema of the document is the one its operations use.
pub fn openapi_schema_collisions() -> Vec<String> {
    let api = api_routes();
    let registered = api
        .registered_schemas()
        .iter()
        .cloned()
        .chain(crate::widget::registered_schemas())
        .chain(sign_in_schemas())
        .chain(crate::openapi::own_schemas());
    crate::openapi::schema_collisions(registered)
}

/// The schemas of the agent sign-in operations, as their document holds
/// them (one per name within it).
fn sign_in_schemas() -> Vec<(
    String,
    utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
)> {
    [
        crate::accounts::routes::operations(),
        crate::sso::flow::operations(),
        crate::email::webhooks::operations(),
    ]
    .into_iter()
    .filter_map(|doc| doc.components)
    .flat_map(|components| components.schemas)
    .collect()
}

/// The operations outside the API's key check, from their routers: the
/// widget's, and the agent sign-in's (`/api/v1/auth/…`).
fn public_operations() -> utoipa::openapi::OpenApi {
    let mut doc = crate::widget::operations();
    doc.merge(crate::accounts::routes::operations());
    doc.merge(crate::sso::flow::operations());
    doc.merge(crate::email::webhooks::operations());
    doc
}

/// The OpenAPI document the service serves, from the same routers.
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    let (_, operations, specs) = api_routes().into_parts();
    crate::openapi::document(operations, &specs, public_operations())
}

pub struct App {
    listener: TcpListener,
    port: u16,
    state: AppState,
    router: Router,
    shutdown_tx: watch::Sender<bool>,
    /// Set when this start created the demo company (empty database).
    pub demo: Option<DemoCreated>,
    /// The demo's made-up shop, on its own port, when the demo is enabled.
    shop: Option<DemoShop>,
    /// The `GET /metrics` listener, when `metrics_bind` is set.
    metrics: Option<(TcpListener, &'static PrometheusHandle)>,
}

struct DemoShop {
    listener: TcpListener,
    url: Arc<str>,
    router: Router,
}

/// Triggers a graceful shutdown from anywhere (signal handler, test).
#[derive(Clone)]
pub struct ShutdownHandle(watch::Sender<bool>);

impl ShutdownHandle {
    pub fn trigger(&self) {
        let _ = self.0.send(true);
    }
}

impl App {
    pub async fn build(config: Config) -> anyhow::Result<App> {
        let db = Db::connect_with(&config.database_url, config.statement_timeout).await?;
        db.migrate().await?;
        let cursors = Arc::new(crate::paging::Cursors::load(&db).await?);
        let redis = match &config.redis_url {
            Some(url) => Some(connect_redis(url).await?),
            None => None,
        };
        let listener = TcpListener::bind(&config.bind).await?;
        let port = listener.local_addr()?.port();
        let public_url: Arc<str> = config.public_url(port).into();
        let shop_listener = if config.demo {
            let listener = TcpListener::bind(&config.demo_shop_bind).await?;
            let url: Arc<str> =
                crate::config::local_url(&config.demo_shop_bind, listener.local_addr()?.port())
                    .into();
            Some((listener, url))
        } else {
            None
        };

        let metrics = match &config.metrics_bind {
            Some(bind) => {
                let handle = crate::metrics::install()?;
                crate::metrics::build_info(db.backend());
                Some((TcpListener::bind(bind).await?, handle))
            }
            None => None,
        };

        let demo = if config.bootstrap_demo {
            bootstrap::on_start(&db, config.demo, &public_url).await?
        } else {
            None
        };

        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let clock = crate::time::Clock::offset_by(config.clock_offset);
        let access = Arc::new(crate::auth::access::Access::new(
            &config,
            redis.clone(),
            &clock,
        ));
        let realtime =
            Arc::new(crate::realtime::Realtime::new(&config, redis.clone(), &clock).await?);
        let jobs = Arc::new(crate::jobs::registry(&config)?);
        let attachments =
            Arc::new(crate::attachments::Attachments::new(&config, &db, public_url.clone()).await?);
        // Every transaction of the service's handle hands the ticket events
        // it staged to the one ticket publisher once it commits.
        let db = db.with_publisher(Arc::new(crate::realtime::tickets::TicketPublisher::new(
            realtime.clone(),
        )));
        let state = AppState::new(SharedState {
            config: Arc::new(config),
            clock,
            attachments,
            cursors,
            db,
            redis,
            access,
            sla: Arc::new(crate::sla::cache::new_cache()),
            field_definitions: Arc::new(crate::custom_fields::new_definition_cache()),
            ticket_subscribers: Arc::default(),
            sso_providers: Arc::default(),
            sns_certificates: Arc::default(),
            realtime,
            jobs,
            public_url,
            shutdown: shutdown_rx,
        });
        let router = router(
            state.clone(),
            shop_listener.as_ref().map(|(_, url)| url.clone()),
        );
        let shop = shop_listener.map(|(listener, url)| DemoShop {
            listener,
            url,
            router: layered(crate::demo::shop::router(state.public_url.clone()))
                .with_state(state.clone()),
        });
        crate::auth::access::spawn_invalidation_listener(
            &state.access,
            &state.realtime.bus,
            state.shutdown.clone(),
        );
        crate::snapshots::spawn_invalidation_listener(
            &state.realtime.bus,
            state.shutdown.clone(),
            &state.sla,
        );
        crate::snapshots::spawn_invalidation_listener(
            &state.realtime.bus,
            state.shutdown.clone(),
            &state.field_definitions,
        );
        Ok(App {
            listener,
            port,
            state,
            router,
            shutdown_tx,
            demo,
            shop,
            metrics,
        })
    }

    /// The port of the `GET /metrics` listener, when metrics are on.
    pub fn metrics_port(&self) -> Option<u16> {
        let (listener, _) = self.metrics.as_ref()?;
        listener.local_addr().ok().map(|address| address.port())
    }

    /// The demo shop's base URL, when the demo is enabled.
    pub fn shop_url(&self) -> Option<Arc<str>> {
        self.shop.as_ref().map(|shop| shop.url.clone())
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle(self.shutdown_tx.clone())
    }

    /// Serves until shutdown is triggered, lets in-flight requests finish,
    /// then stops the workers.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let workers = if self.state.config.run_workers {
            spawn_workers(&self.state)
        } else {
            Vec::new()
        };
        tokio::spawn(crate::realtime::workers::close_sockets_at_shutdown(
            self.state.realtime.clone(),
            self.state.shutdown.clone(),
        ));
        let timeouts = Timeouts::of(&self.state.config);
        let proxies = Arc::new(self.state.config.trusted_proxies.clone());
        let shop = self.shop.map(|shop| {
            tokio::spawn(serve(
                shop.listener,
                shop.router,
                self.state.shutdown.clone(),
                timeouts,
                proxies.clone(),
            ))
        });
        let metrics = self.metrics.map(|(listener, handle)| {
            let router = crate::metrics::server::router(
                self.state.db.clone(),
                self.state.jobs.clone(),
                self.state.realtime.clone(),
                handle,
            );
            let shutdown = self.state.shutdown.clone();
            tokio::spawn(crate::metrics::server::run_upkeep(handle, shutdown.clone()));
            tokio::spawn(serve(listener, router, shutdown, timeouts, proxies.clone()))
        });
        serve(
            self.listener,
            self.router,
            self.state.shutdown.clone(),
            timeouts,
            proxies,
        )
        .await;
        for other in shop.into_iter().chain(metrics) {
            let _ = other.await;
        }
        for worker in workers {
            if tokio::time::timeout(Duration::from_secs(10), worker)
                .await
                .is_err()
            {
                tracing::warn!("a worker did not stop within 10 s");
            }
        }
        self.state.db.close().await;
        tracing::info!("stopped");
        Ok(())
    }
}

/// How long a client may take to send a request: its headers, its body.
#[derive(Debug, Clone, Copy)]
struct Timeouts {
    headers: Duration,
    body: crate::slow_bodies::BodyTimeouts,
}

impl Timeouts {
    fn of(config: &Config) -> Self {
        Timeouts {
            headers: config.header_read_timeout,
            body: crate::slow_bodies::BodyTimeouts {
                idle: config.body_read_timeout,
                whole: config.body_read_deadline,
            },
        }
    }
}

/// Serves HTTP/1.1 and HTTP/2 (with upgrades, for sockets) until shutdown,
/// then lets in-flight requests finish (30 s at most). Unlike `axum::serve`,
/// connections get a timer, so a client that trickles its headers
/// (slowloris) is cut off after the header timeout, and request bodies
/// are timed (`slow_bodies`). Each request carries its client's address
/// (`ClientAddress`), resolved here once: the peer, or what the trusted
/// `proxies` forwarded.
async fn serve(
    listener: TcpListener,
    router: Router,
    mut shutdown: watch::Receiver<bool>,
    timeouts: Timeouts,
    proxies: Arc<TrustedProxies>,
) {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::server::conn::auto::Builder;
    use tower::ServiceExt;

    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(timeouts.headers)
        .max_buf_size(64 * 1024);
    builder
        .http2()
        .timer(TokioTimer::new())
        .enable_connect_protocol()
        .max_header_list_size(64 * 1024);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: pause, go on.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = async { shutdown.wait_for(|stop| *stop).await.map(|_| ()) } => break,
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let proxies = proxies.clone();
        let service =
            hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
                let client = ClientAddress::resolve(remote, request.headers(), &proxies);
                request.extensions_mut().insert(ClientAddress(Some(client)));
                let (request, timed_out) = crate::slow_bodies::watch(request, timeouts.body);
                let response = router.clone().oneshot(request);
                async move {
                    let response = response.await?;
                    Ok::<_, Infallible>(crate::slow_bodies::answer(response, timed_out.as_ref()))
                }
            });
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::trace!(%error, "connection ended");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(Duration::from_secs(30), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open 30 s after shutdown");
    }
}

async fn connect_redis(url: &str) -> anyhow::Result<crate::redis_conn::RedisConn> {
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(Duration::from_secs(2)))
        .set_number_of_retries(1);
    crate::redis_conn::RedisConn::connect(url, config).await
}

fn spawn_workers(state: &AppState) -> Vec<JoinHandle<()>> {
    let mut workers = Vec::new();
    workers.extend(crate::outbox::spawn_workers(
        state.jobs.clone(),
        state.db.clone(),
        state.clock.clone(),
        state.shutdown.clone(),
    ));
    workers.extend(crate::realtime::workers::spawn_workers(state));
    workers.extend(crate::tickets::spawn_workers(state));
    workers.push(crate::email::imap::spawn(state));
    workers.push(crate::retention::spawn(
        state.db.clone(),
        state.attachments.clone(),
        state.clock.clone(),
        crate::retention::Policy::from_config(&state.config),
        state.config.retention_interval,
        state.shutdown.clone(),
    ));
    workers.push(crate::changes::numbering::spawn(
        state.db.clone(),
        state.shutdown.clone(),
    ));
    workers.push(crate::audit::sealer::spawn(
        state.db.clone(),
        state.clock.clone(),
        state.shutdown.clone(),
    ));
    workers.push(crate::sequences::sla_pass::spawn(
        state.db.clone(),
        state.attachments.clone(),
        state.clock.clone(),
        state.config.rules_interval,
        state.shutdown.clone(),
    ));
    workers.push(crate::sequences::automations::spawn(
        state,
        state.config.rules_interval,
    ));
    workers.push(crate::teams::routing::spawn_worker(
        state.into(),
        state.config.routing_tick,
        state.shutdown.clone(),
    ));
    workers.push(crate::attachments::sweep::spawn(
        state.db.clone(),
        state.attachments.clone(),
        state.clock.clone(),
        state.config.retention_interval,
        state.shutdown.clone(),
    ));
    workers
}
