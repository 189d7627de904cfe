//! HTTP/1.1 keep-alive client: one hyper connection per task, connections
//! spread over 127.0.0.x source addresses, and a closed-loop load generator
//! (each connection sends its next request when the previous one answered).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpSocket, TcpStream};

use crate::stats::{self, Throughput};

/// 127.0.0.2 .. 127.0.0.201: Linux routes all of 127/8 to loopback, so a
/// client can bind any of them and reach a server on 127.0.0.1. Spreading
/// connections over source addresses keeps each (source, destination) pair
/// far below the ephemeral port range.
pub fn source_ip(index: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + (index % 200) as u8))
}

/// A TCP connection to `addr` from source address number `index`.
pub async fn connect_from(index: usize, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(source_ip(index), 0))?;
    let stream = socket.connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// A request as the load generator builds it: method, path and query, the
/// headers, a body. Built per request by a `MakeRequest`.
#[derive(Clone)]
pub struct Req {
    pub method: Method,
    pub path: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Option<Bytes>,
}

impl Req {
    pub fn get(path: impl Into<String>) -> Req {
        Req {
            method: Method::GET,
            path: path.into(),
            headers: Vec::new(),
            body: None,
        }
    }

    pub fn post_json(path: impl Into<String>, body: &serde_json::Value) -> Req {
        Req {
            method: Method::POST,
            path: path.into(),
            headers: vec![("content-type", "application/json".into())],
            body: Some(Bytes::from(body.to_string())),
        }
    }

    pub fn key(mut self, key: &str) -> Req {
        self.headers.push(("x-api-key", key.to_string()));
        self
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Req {
        self.headers.push((name, value.into()));
        self
    }

    fn build(&self, host: &str) -> Request<Full<Bytes>> {
        let mut builder = Request::builder()
            .method(self.method.clone())
            .uri(&self.path)
            .header("host", host);
        for (name, value) in &self.headers {
            builder = builder.header(*name, value);
        }
        builder
            .body(Full::new(self.body.clone().unwrap_or_default()))
            .expect("valid request")
    }
}

pub type MakeRequest = Arc<dyn Fn(u64) -> Req + Send + Sync>;

/// One keep-alive HTTP/1.1 connection.
pub struct Conn {
    sender: http1::SendRequest<Full<Bytes>>,
    host: String,
}

impl Conn {
    pub async fn open(index: usize, addr: SocketAddr) -> anyhow::Result<Conn> {
        let stream = connect_from(index, addr)
            .await
            .with_context(|| format!("connecting to {addr}"))?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Conn {
            sender,
            host: addr.to_string(),
        })
    }

    /// Sends `req` and reads the whole response.
    pub async fn send(&mut self, req: &Req) -> anyhow::Result<(StatusCode, Bytes)> {
        self.sender.ready().await?;
        let response = self.sender.send_request(req.build(&self.host)).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }

    /// Sends `req` and returns the status, the response's headers and its body.
    pub async fn send_with_headers(
        &mut self,
        req: &Req,
    ) -> anyhow::Result<(StatusCode, hyper::HeaderMap, Bytes)> {
        self.sender.ready().await?;
        let response = self.sender.send_request(req.build(&self.host)).await?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await?.to_bytes();
        Ok((parts.status, parts.headers, body))
    }

    /// Sends `req` and returns the JSON body, failing unless the status is `expect`.
    pub async fn json(
        &mut self,
        req: &Req,
        expect: StatusCode,
    ) -> anyhow::Result<serde_json::Value> {
        let (status, body) = self.send(req).await?;
        anyhow::ensure!(
            status == expect,
            "{} {} answered {status} (expected {expect}): {}",
            req.method,
            req.path,
            String::from_utf8_lossy(&body[..body.len().min(300)])
        );
        Ok(serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null))
    }
}

/// A closed-loop load: `conns` connections for `warmup + duration`; only
/// requests started after the warm-up count.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    pub conns: usize,
    pub warmup: Duration,
    pub duration: Duration,
}

pub async fn run_load(
    addr: SocketAddr,
    load: Load,
    expect: StatusCode,
    make: MakeRequest,
) -> anyhow::Result<Throughput> {
    let start = Instant::now();
    let measure_from = start + load.warmup;
    let end = measure_from + load.duration;
    let mut tasks = Vec::new();
    for index in 0..load.conns {
        let make = make.clone();
        tasks.push(tokio::spawn(async move {
            let mut hist = stats::histogram();
            let (mut ok, mut errors, mut first_error) = (0u64, 0u64, None::<String>);
            let mut seq = index as u64;
            let mut conn: Option<Conn> = None;
            while Instant::now() < end {
                if conn.is_none() {
                    match Conn::open(index, addr).await {
                        Ok(c) => conn = Some(c),
                        Err(e) => {
                            errors += 1;
                            first_error.get_or_insert_with(|| format!("{e:#}"));
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            continue;
                        }
                    }
                }
                let req = make(seq);
                seq += load.conns as u64;
                let sent = Instant::now();
                let result = conn.as_mut().expect("connected").send(&req).await;
                let micros = sent.elapsed().as_micros() as u64;
                let counted = sent >= measure_from;
                match result {
                    Ok((status, _)) if status == expect => {
                        if counted {
                            ok += 1;
                            stats::record(&mut hist, micros);
                        }
                    }
                    Ok((status, body)) => {
                        if counted {
                            errors += 1;
                        }
                        first_error.get_or_insert_with(|| {
                            format!(
                                "{} {} -> {status}: {}",
                                req.method,
                                req.path,
                                String::from_utf8_lossy(&body[..body.len().min(200)])
                            )
                        });
                    }
                    Err(e) => {
                        errors += 1;
                        first_error.get_or_insert_with(|| format!("{e:#}"));
                        conn = None;
                    }
                }
            }
            (hist, ok, errors, first_error)
        }));
    }
    let mut total = Throughput {
        ok: 0,
        errors: 0,
        secs: load.duration.as_secs_f64(),
        hist: stats::histogram(),
        first_error: None,
    };
    for task in tasks {
        let (hist, ok, errors, first_error) = task.await?;
        total.hist.add(&hist).ok();
        total.ok += ok;
        total.errors += errors;
        if total.first_error.is_none() {
            total.first_error = first_error;
        }
    }
    Ok(total)
}

/// An open-loop load: `rate` requests per second for `warmup + duration`,
/// spread over `conns` connections (request k on connection k % conns at
/// start + k / rate). Latency counts from the scheduled time, so a request
/// delayed behind a slow one is charged for its wait (no coordinated
/// omission).
pub async fn run_rate(
    addr: SocketAddr,
    load: Load,
    rate: f64,
    expect: StatusCode,
    make: MakeRequest,
) -> anyhow::Result<Throughput> {
    let start = tokio::time::Instant::now() + Duration::from_millis(50);
    let total = ((load.warmup + load.duration).as_secs_f64() * rate) as u64;
    let warm = (load.warmup.as_secs_f64() * rate) as u64;
    let conns = load.conns as u64;
    let mut tasks = Vec::new();
    for c in 0..conns {
        let make = make.clone();
        tasks.push(tokio::spawn(async move {
            let mut hist = stats::histogram();
            let (mut ok, mut errors, mut first_error) = (0u64, 0u64, None::<String>);
            let mut conn = Conn::open(c as usize, addr).await?;
            let mut k = c;
            while k < total {
                let due = start + Duration::from_secs_f64(k as f64 / rate);
                tokio::time::sleep_until(due).await;
                let req = make(k);
                let result = conn.send(&req).await;
                let micros = due.elapsed().as_micros() as u64;
                let counted = k >= warm;
                match result {
                    Ok((status, _)) if status == expect => {
                        if counted {
                            ok += 1;
                            stats::record(&mut hist, micros);
                        }
                    }
                    Ok((status, _)) => {
                        errors += u64::from(counted);
                        first_error.get_or_insert_with(|| format!("{} -> {status}", req.path));
                    }
                    Err(e) => {
                        errors += u64::from(counted);
                        first_error.get_or_insert_with(|| format!("{e:#}"));
                        conn = Conn::open(c as usize, addr).await?;
                    }
                }
                k += conns;
            }
            anyhow::Ok((hist, ok, errors, first_error))
        }));
    }
    let mut total_t = Throughput::empty();
    total_t.secs = load.duration.as_secs_f64();
    for task in tasks {
        let (hist, ok, errors, first_error) = task.await??;
        total_t.merge(Throughput {
            ok,
            errors,
            secs: 0.0,
            hist,
            first_error,
        });
    }
    Ok(total_t)
}
