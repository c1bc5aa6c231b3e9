//! The partition circuits of one request, behind one object-safe trait.
//!
//! storage-proofs describes every proof kind the same way: a vanilla
//! [`ProofScheme`] (public parameters, public inputs, one vanilla proof per
//! partition) and a [`CompoundProof`] that turns them into a bellperson
//! circuit per partition, a blank circuit for parameters, and the public
//! inputs a verifier computes. [`Compound`] holds those three for any kind;
//! [`Partitions`] erases the types so that the engine and the CLI handle
//! every kind alike.

use std::marker::PhantomData;

use bellperson_lite::{AnyCircuit, CircuitV02, CompiledShape, ProvingAssignment, ShapedWitness};
use blstrs::Scalar;
use cuzk_pipeline::Witness;
use ff::Field;
use storage_proofs_core::compound_proof::{CircuitComponent, CompoundProof};
use storage_proofs_core::parameter_cache::{CacheableParameters, ParameterSetMetadata};
use storage_proofs_core::proof::ProofScheme;

use crate::FilecoinError;

/// The partitions of one request, whatever its kind.
pub trait Partitions: Send + Sync {
    /// How many partitions.
    fn count(&self) -> usize;
    /// Partition `k`'s circuit, synthesized in full.
    fn synthesize(&self, k: usize) -> Result<ProvingAssignment, FilecoinError>;
    /// Partition `k`'s witness on the compiled path of `shape` (compiled
    /// from the blank circuit): from the kind's native witness program
    /// where it has one and `witness` asks for it, else from its gadgets.
    fn record_witness(
        &self,
        shape: &CompiledShape,
        k: usize,
        witness: Witness,
    ) -> Result<ShapedWitness, FilecoinError>;
    /// Partition `k`'s public inputs (without `ONE`), as filecoin-proofs'
    /// verifier computes them.
    fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>, FilecoinError>;
    /// Where the compiled path's witness comes from when `witness` is
    /// asked for: `native program`, `gadgets, in pieces` where the kind
    /// splits its circuit, else `gadgets`.
    fn witness_source(&self, witness: Witness) -> &'static str;
}

/// A kind's vanilla public parameters, public inputs and per-partition
/// vanilla proofs, with its compound proof type `P` and circuit type `C`.
pub(crate) struct Compound<S: ProofScheme<'static>, C, P> {
    pub(crate) pub_params: S::PublicParams,
    pub(crate) pub_inputs: S::PublicInputs,
    pub(crate) vanilla: Vec<S::Proof>,
    /// Splits partition `k`'s circuit into pieces whose witnesses are
    /// recorded in parallel (see
    /// [`CompiledShape::record_witness_pieces`]); `None`: the kind's
    /// circuit is recorded whole, on one core.
    pieces: Option<Pieces<S, C, P>>,
    /// The kind's native witness program, if it has one.
    native: Option<Native<S, C, P>>,
    pub(crate) _types: PhantomData<fn() -> (C, P)>,
}

/// Partition `k`'s aux assignment from a native witness program, for a
/// shape of `num_aux` private variables.
pub(crate) type Native<S, C, P> =
    fn(&Compound<S, C, P>, usize, usize) -> Result<Vec<Scalar>, crate::native::NativeError>;

/// Partition `k`'s circuit as pieces: each allocates the circuit's prefix
/// and then a run of its independent blocks, the runs in order.
pub(crate) type Pieces<S, C, P> = fn(&Compound<S, C, P>, usize) -> Result<Vec<C>, FilecoinError>;

impl<S, C, P> Compound<S, C, P>
where
    S: ProofScheme<'static>,
    S::Proof: Sync + Send,
    S::PublicParams: ParameterSetMetadata + Sync + Send,
    S::PublicInputs: Clone + Sync + Send,
    C: bellperson::Circuit<Scalar> + CircuitComponent + Send,
    P: CompoundProof<'static, S, C>,
{
    pub(crate) fn new(
        pub_params: S::PublicParams,
        pub_inputs: S::PublicInputs,
        vanilla: Vec<S::Proof>,
    ) -> Self {
        Compound {
            pub_params,
            pub_inputs,
            vanilla,
            pieces: None,
            native: None,
            _types: PhantomData,
        }
    }

    /// Computes partitions' witnesses with `program`, a native witness
    /// program, when a native witness is asked for.
    pub(crate) fn with_native(mut self, program: Native<S, C, P>) -> Self {
        self.native = Some(program);
        self
    }

    /// Records partitions' witnesses in pieces, split by `pieces`, unless
    /// `CUZK_WITNESS_PIECES=0` asks for whole circuits (to compare the two
    /// in one build; reports name the source either way).
    pub(crate) fn with_pieces(mut self, pieces: Pieces<S, C, P>) -> Self {
        if std::env::var("CUZK_WITNESS_PIECES").as_deref() != Ok("0") {
            self.pieces = Some(pieces);
        }
        self
    }

    /// Partition `k`'s vanilla proof.
    pub(crate) fn vanilla(&self, k: usize) -> Result<&S::Proof, FilecoinError> {
        self.vanilla
            .get(k)
            .ok_or_else(|| crate::error::bad("partition", format!("{k} of {}", self.vanilla.len())))
    }

    /// The circuit of partition `k` with `vanilla` as its vanilla proof,
    /// exactly as `CompoundProof::circuit_proofs` builds it.
    pub(crate) fn circuit_of(&self, k: usize, vanilla: &S::Proof) -> Result<C, FilecoinError> {
        Ok(P::circuit(
            &self.pub_inputs,
            C::ComponentPrivateInputs::default(),
            vanilla,
            &self.pub_params,
            Some(k),
        )?)
    }

    /// Partition `k`'s circuit.
    pub(crate) fn circuit(&self, k: usize) -> Result<C, FilecoinError> {
        self.circuit_of(k, self.vanilla(k)?)
    }
}

impl<S, C, P> Partitions for Compound<S, C, P>
where
    S: ProofScheme<'static>,
    S::Proof: Sync + Send,
    S::PublicParams: ParameterSetMetadata + Sync + Send,
    S::PublicInputs: Clone + Sync + Send,
    C: bellperson::Circuit<Scalar> + CircuitComponent + Send,
    P: CompoundProof<'static, S, C>,
{
    fn count(&self) -> usize {
        self.vanilla.len()
    }

    fn synthesize(&self, k: usize) -> Result<ProvingAssignment, FilecoinError> {
        ProvingAssignment::synthesize(CircuitV02(self.circuit(k)?)).map_err(|e| {
            FilecoinError::Synthesis {
                partition: k,
                source: e.into(),
            }
        })
    }

    fn record_witness(
        &self,
        shape: &CompiledShape,
        k: usize,
        witness: Witness,
    ) -> Result<ShapedWitness, FilecoinError> {
        if let (Witness::Native, Some(program)) = (witness, self.native) {
            let native = |e| FilecoinError::NativeWitness {
                partition: k,
                source: e,
            };
            let aux = program(self, k, shape.num_aux()).map_err(native)?;
            let mut input = vec![Scalar::ONE];
            input.extend(self.public_inputs(k)?);
            return shape
                .value_witness(input, aux)
                .map_err(|e| native(crate::native::NativeError::Shape(e)));
        }
        let recorded = match self.pieces {
            None => shape.record_witness(CircuitV02(self.circuit(k)?)),
            Some(split) => {
                let pieces = split(self, k)?.into_iter().map(CircuitV02).collect();
                shape.record_witness_pieces(pieces)
            }
        };
        recorded.map_err(|source| FilecoinError::Synthesis {
            partition: k,
            source,
        })
    }

    fn witness_source(&self, witness: Witness) -> &'static str {
        match (witness, self.native, self.pieces) {
            (Witness::Native, Some(_), _) => "native program",
            (_, _, Some(_)) => "gadgets, in pieces",
            _ => "gadgets",
        }
    }

    fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>, FilecoinError> {
        Ok(P::generate_public_inputs(
            &self.pub_inputs,
            &self.pub_params,
            Some(k),
        )?)
    }
}

/// The blank circuit and parameter-cache identifier of a kind's public
/// parameters.
pub(crate) struct Blank<C> {
    pub(crate) circuit: CircuitV02<C>,
    pub(crate) cache_id: String,
}

impl<C: bellperson::Circuit<Scalar>> Blank<C> {
    /// From `pub_params` through the compound proof type `P`.
    pub(crate) fn of<S, P>(pub_params: &S::PublicParams) -> Self
    where
        S: ProofScheme<'static>,
        S::Proof: Sync + Send,
        S::PublicParams: ParameterSetMetadata + Sync + Send,
        S::PublicInputs: Clone + Sync,
        C: CircuitComponent + Send,
        P: CompoundProof<'static, S, C>,
    {
        Blank {
            circuit: CircuitV02(P::blank_circuit(pub_params)),
            cache_id: <P as CacheableParameters<C, S::PublicParams>>::cache_identifier(pub_params),
        }
    }
}

/// Erases a blank circuit's type for the callers that only compile it (a
/// setup starts from the compiled shape too).
pub(crate) trait BlankCircuit {
    fn cache_id(&self) -> &str;
    fn compile(self: Box<Self>) -> Result<CompiledShape, bellperson_lite::CompiledError>;
}

impl<C> BlankCircuit for Blank<C>
where
    CircuitV02<C>: AnyCircuit,
{
    fn cache_id(&self) -> &str {
        &self.cache_id
    }

    fn compile(self: Box<Self>) -> Result<CompiledShape, bellperson_lite::CompiledError> {
        CompiledShape::compile(self.circuit)
    }
}
