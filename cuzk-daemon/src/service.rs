//! `cuzk.v1.ProvingEngine` over the daemon: each RPC unpacks its request,
//! checks that the caller may make it (docs/daemon.md, Remote use), calls
//! the daemon's operation and packs the answer.

use std::sync::Arc;
use std::time::Duration;

use tonic::{Request, Response, Status};

use crate::auth::Role;
use crate::daemon::Daemon;
use crate::pb::proving_engine_server::ProvingEngine;
use crate::pb::{self, AwaitProofResponse};

/// The gRPC service.
pub(crate) struct Service {
    pub(crate) daemon: Arc<Daemon>,
}

type Answer<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl ProvingEngine for Service {
    async fn submit_proof(
        &self,
        request: Request<pb::SubmitProofRequest>,
    ) -> Answer<pb::SubmitProofResponse> {
        self.daemon.access.grpc(&request, Role::Submit)?;
        let (job, position) = self.daemon.submit(request.into_inner()).await?;
        Ok(Response::new(pb::SubmitProofResponse {
            job_id: job.id.clone(),
            queue_position: position as u32,
            assigned_gpu: String::new(),
        }))
    }

    async fn await_proof(
        &self,
        request: Request<pb::AwaitProofRequest>,
    ) -> Answer<AwaitProofResponse> {
        self.daemon.access.grpc(&request, Role::Submit)?;
        let request = request.into_inner();
        let timeout = Duration::from_millis(request.timeout_ms);
        let outcome = self.daemon.await_outcome(&request.job_id, timeout).await?;
        Ok(Response::new(outcome))
    }

    async fn prove(&self, request: Request<pb::ProveRequest>) -> Answer<pb::ProveResponse> {
        self.daemon.access.grpc(&request, Role::Submit)?;
        let submit = request
            .into_inner()
            .submit
            .ok_or_else(|| Status::invalid_argument("submit: the request is missing"))?;
        let (job, _) = self.daemon.submit(submit).await?;
        let result = self.daemon.await_outcome(&job.id, Duration::ZERO).await?;
        Ok(Response::new(pb::ProveResponse {
            result: Some(result),
        }))
    }

    async fn cancel_proof(
        &self,
        request: Request<pb::CancelProofRequest>,
    ) -> Answer<pb::CancelProofResponse> {
        self.daemon.access.grpc(&request, Role::Admin)?;
        let was_running = self.daemon.cancel(&request.into_inner().job_id).await?;
        Ok(Response::new(pb::CancelProofResponse { was_running }))
    }

    async fn get_status(
        &self,
        request: Request<pb::GetStatusRequest>,
    ) -> Answer<pb::GetStatusResponse> {
        self.daemon.access.grpc(&request, Role::Metrics)?;
        Ok(Response::new(self.daemon.status()))
    }

    async fn get_metrics(
        &self,
        request: Request<pb::GetMetricsRequest>,
    ) -> Answer<pb::GetMetricsResponse> {
        self.daemon.access.grpc(&request, Role::Metrics)?;
        Ok(Response::new(pb::GetMetricsResponse {
            prometheus_text: self.daemon.metrics_text(),
        }))
    }

    async fn preload_srs(
        &self,
        request: Request<pb::PreloadSrsRequest>,
    ) -> Answer<pb::PreloadSrsResponse> {
        self.daemon.access.grpc(&request, Role::Admin)?;
        let loaded = self
            .daemon
            .preload(&request.into_inner().circuit_id)
            .await?;
        Ok(Response::new(pb::PreloadSrsResponse {
            already_loaded: loaded.already_loaded,
            load_time_ms: loaded.load_time.as_millis() as u64,
            size_bytes: loaded.size_bytes,
        }))
    }

    async fn aggregate_seal_proofs(
        &self,
        request: Request<pb::AggregateSealProofsRequest>,
    ) -> Answer<pb::AggregateSealProofsResponse> {
        self.daemon.access.grpc(&request, Role::Submit)?;
        let answer = self.daemon.aggregate(request.into_inner()).await?;
        Ok(Response::new(answer))
    }

    async fn evict_srs(
        &self,
        request: Request<pb::EvictSrsRequest>,
    ) -> Answer<pb::EvictSrsResponse> {
        self.daemon.access.grpc(&request, Role::Admin)?;
        let freed = self.daemon.evict(&request.into_inner().circuit_id)?;
        Ok(Response::new(pb::EvictSrsResponse {
            was_loaded: freed.is_some(),
            freed_bytes: freed.unwrap_or(0),
        }))
    }
}
