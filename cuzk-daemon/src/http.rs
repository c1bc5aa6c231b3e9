//! `/metrics` (OpenMetrics text), `/healthz` and `/status` (JSON) over
//! HTTP/1; with a tokens file, `/metrics` and `/status` need a token
//! (any role: `metrics` is the one to give a scraper), `/healthz` none.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::auth::Role;
use crate::daemon::{Daemon, Lifecycle};

/// The routes, over `daemon`.
pub(crate) fn router(daemon: Arc<Daemon>) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route("/status", get(status))
        .with_state(daemon)
}

async fn metrics(State(daemon): State<Arc<Daemon>>, headers: HeaderMap) -> Response {
    if let Err(denied) = daemon.access.http(&headers, Role::Metrics) {
        return denied.into_response();
    }
    (
        [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
        daemon.metrics_text(),
    )
        .into_response()
}

/// 200 while jobs are taken, 503 once shutdown has begun.
async fn healthz(State(daemon): State<Arc<Daemon>>) -> (StatusCode, &'static str) {
    match daemon.lifecycle() {
        Lifecycle::Serving => (StatusCode::OK, "ok\n"),
        Lifecycle::Draining | Lifecycle::Stopped => {
            (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n")
        }
    }
}

/// The daemon's state as one JSON object (docs/daemon.md).
async fn status(State(daemon): State<Arc<Daemon>>, headers: HeaderMap) -> Response {
    if let Err(denied) = daemon.access.http(&headers, Role::Metrics) {
        return denied.into_response();
    }
    let report = daemon.status_report();
    let body = serde_json::to_string(&report).expect("the report serializes");
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}
