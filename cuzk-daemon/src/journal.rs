//! The job journal: every accepted job, in an embedded database (redb), so
//! that nothing accepted is lost to a crash or a restart.
//!
//! A job is written, with its request, before `SubmitProof` answers (a
//! durable commit). Its outcome replaces the request when it finishes
//! (durable too). After a restart every entry without an outcome runs
//! again; an outcome stays until it is fetched (`AwaitProof` or `Prove`
//! hands it out) or until it expires. Removing a fetched outcome is not
//! forced to disk: a crash may bring it back, never lose one.
//!
//! An entry that no longer decodes (bytes damaged on disk, or a foreign
//! writer) does not stop the daemon: opening the journal moves it, bytes
//! intact, to a quarantine table (never run, kept for inspection) and
//! reports it, and every other entry loads.

// redb's error is large; it is boxed where it leaves this module.
#![allow(clippy::result_large_err)]

use std::path::{Path, PathBuf};

use prost::Message;
use redb::{Database, Durability, ReadableTable, ReadableTableMetadata, TableDefinition};

use crate::pb;

/// Jobs by sequence number: an encoded [`Entry`].
const JOBS: TableDefinition<u64, &[u8]> = TableDefinition::new("jobs");
/// Damaged entries, by sequence number: their bytes as found.
const QUARANTINE: TableDefinition<u64, &[u8]> = TableDefinition::new("quarantine");
/// Counters: `next_seq`.
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const NEXT_SEQ: &str = "next_seq";

/// One job as the journal keeps it.
#[derive(Clone, PartialEq, Message)]
pub struct Entry {
    /// When it was accepted (Unix milliseconds).
    #[prost(uint64, tag = "1")]
    pub accepted_unix_ms: u64,
    /// The request as submitted; dropped once the job has an outcome.
    #[prost(message, optional, tag = "2")]
    pub request: Option<pb::SubmitProofRequest>,
    /// The outcome, once there is one.
    #[prost(message, optional, tag = "3")]
    pub outcome: Option<pb::AwaitProofResponse>,
    /// When the outcome was recorded (Unix milliseconds).
    #[prost(uint64, tag = "4")]
    pub finished_unix_ms: u64,
}

/// The journal failed: the file, what was being done, why.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The database failed.
    #[error("job journal {}: {what}", path.display())]
    Database {
        /// The journal's file.
        path: PathBuf,
        /// The operation.
        what: &'static str,
        /// Why (boxed: redb's error is large).
        #[source]
        source: Box<redb::Error>,
    },
    /// An entry does not decode (a damaged file or a foreign writer).
    #[error("job journal {}: entry {seq} is damaged", path.display())]
    Damaged {
        /// The journal's file.
        path: PathBuf,
        /// The entry.
        seq: u64,
        /// Why.
        #[source]
        source: prost::DecodeError,
    },
}

/// The journal of one daemon (redb holds the file locked).
pub struct Journal {
    path: PathBuf,
    db: Database,
    /// Entries moved to the quarantine table when this journal was opened.
    quarantined: Vec<u64>,
}

impl Journal {
    /// Opens the journal at `path`, creating it (and its directory) if
    /// needed; a journal left by a crash is repaired on open.
    pub fn open(path: &Path) -> Result<Self, JournalError> {
        let fail = |what, source: redb::Error| JournalError::Database {
            path: path.to_owned(),
            what,
            source: Box::new(source),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail("create its directory", e.into()))?;
        }
        let db = Database::create(path).map_err(|e| fail("open", e.into()))?;
        let mut journal = Self {
            path: path.to_owned(),
            db,
            quarantined: Vec::new(),
        };
        // Make every table, so that reads of a fresh journal find them, and
        // set damaged entries aside.
        journal.quarantined = journal.write("check its entries", Durability::Immediate, |txn| {
            txn.open_table(META)?;
            let mut jobs = txn.open_table(JOBS)?;
            let mut quarantine = txn.open_table(QUARANTINE)?;
            let mut damaged = Vec::new();
            for item in jobs.iter()? {
                let (seq, bytes) = item?;
                if Entry::decode(bytes.value()).is_err() {
                    damaged.push((seq.value(), bytes.value().to_vec()));
                }
            }
            for (seq, bytes) in &damaged {
                jobs.remove(*seq)?;
                quarantine.insert(*seq, bytes.as_slice())?;
            }
            Ok(damaged.into_iter().map(|(seq, _)| seq).collect())
        })?;
        Ok(journal)
    }

    /// The entries that did not decode when the journal was opened: moved
    /// to its quarantine table, not run.
    pub fn quarantined(&self) -> &[u64] {
        &self.quarantined
    }

    /// Every entry in quarantine (this opening's and earlier ones).
    pub fn quarantine_len(&self) -> Result<u64, JournalError> {
        self.read("count quarantined entries", |txn| {
            Ok(txn.open_table(QUARANTINE)?.len()?)
        })
    }

    /// Records a new job durably and returns its sequence number.
    pub fn accept(
        &self,
        request: &pb::SubmitProofRequest,
        accepted_unix_ms: u64,
    ) -> Result<u64, JournalError> {
        let entry = Entry {
            accepted_unix_ms,
            request: Some(request.clone()),
            outcome: None,
            finished_unix_ms: 0,
        };
        self.write("record a job", Durability::Immediate, |txn| {
            let mut meta = txn.open_table(META)?;
            let seq = meta.get(NEXT_SEQ)?.map_or(1, |v| v.value());
            meta.insert(NEXT_SEQ, seq + 1)?;
            txn.open_table(JOBS)?
                .insert(seq, entry.encode_to_vec().as_slice())?;
            Ok(seq)
        })
    }

    /// Records job `seq`'s outcome durably, dropping its request.
    pub fn finish(
        &self,
        seq: u64,
        accepted_unix_ms: u64,
        outcome: &pb::AwaitProofResponse,
        finished_unix_ms: u64,
    ) -> Result<(), JournalError> {
        let entry = Entry {
            accepted_unix_ms,
            request: None,
            outcome: Some(outcome.clone()),
            finished_unix_ms,
        };
        self.write("record an outcome", Durability::Immediate, |txn| {
            txn.open_table(JOBS)?
                .insert(seq, entry.encode_to_vec().as_slice())?;
            Ok(())
        })
    }

    /// Job `seq`'s entry, if the journal has it.
    pub fn get(&self, seq: u64) -> Result<Option<Entry>, JournalError> {
        let bytes = self.read("look a job up", |txn| {
            let table = txn.open_table(JOBS)?;
            let value = table.get(seq)?;
            Ok(value.map(|v| v.value().to_vec()))
        })?;
        bytes.map(|b| self.decode(seq, &b)).transpose()
    }

    /// Forgets job `seq` (its outcome was fetched).
    pub fn remove(&self, seq: u64) -> Result<(), JournalError> {
        self.write("forget a job", Durability::Eventual, |txn| {
            txn.open_table(JOBS)?.remove(seq)?;
            Ok(())
        })
    }

    /// Every job without an outcome, oldest first.
    pub fn unfinished(&self) -> Result<Vec<(u64, Entry)>, JournalError> {
        let raw = self.read("list jobs", |txn| {
            let table = txn.open_table(JOBS)?;
            let mut raw = Vec::new();
            for item in table.iter()? {
                let (seq, value) = item?;
                raw.push((seq.value(), value.value().to_vec()));
            }
            Ok(raw)
        })?;
        let mut jobs = Vec::new();
        for (seq, bytes) in raw {
            let entry = self.decode(seq, &bytes)?;
            if entry.outcome.is_none() {
                jobs.push((seq, entry));
            }
        }
        Ok(jobs)
    }

    /// Forgets outcomes recorded before `cutoff_unix_ms`; returns how many.
    pub fn expire(&self, cutoff_unix_ms: u64) -> Result<usize, JournalError> {
        self.write("expire outcomes", Durability::Immediate, |txn| {
            let mut table = txn.open_table(JOBS)?;
            let mut expired = 0;
            table.retain(|_, bytes| {
                let old = Entry::decode(bytes)
                    .is_ok_and(|e| e.outcome.is_some() && e.finished_unix_ms < cutoff_unix_ms);
                expired += usize::from(old);
                !old
            })?;
            Ok(expired)
        })
    }

    fn decode(&self, seq: u64, bytes: &[u8]) -> Result<Entry, JournalError> {
        Entry::decode(bytes).map_err(|source| JournalError::Damaged {
            path: self.path.clone(),
            seq,
            source,
        })
    }

    fn write<T>(
        &self,
        what: &'static str,
        durability: Durability,
        body: impl FnOnce(&redb::WriteTransaction) -> Result<T, redb::Error>,
    ) -> Result<T, JournalError> {
        let run = || -> Result<T, redb::Error> {
            let mut txn = self.db.begin_write()?;
            txn.set_durability(durability);
            let value = body(&txn)?;
            txn.commit()?;
            Ok(value)
        };
        run().map_err(|source| self.fail(what, source))
    }

    fn read<T>(
        &self,
        what: &'static str,
        body: impl FnOnce(&redb::ReadTransaction) -> Result<T, redb::Error>,
    ) -> Result<T, JournalError> {
        let run = || body(&self.db.begin_read()?);
        run().map_err(|source| self.fail(what, source))
    }

    fn fail(&self, what: &'static str, source: redb::Error) -> JournalError {
        JournalError::Database {
            path: self.path.clone(),
            what,
            source: Box::new(source),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(n: u64) -> pb::SubmitProofRequest {
        pb::SubmitProofRequest {
            proof_kind: pb::ProofKind::MulChain as i32,
            sector_size: n,
            ..Default::default()
        }
    }

    #[test]
    fn jobs_survive_reopening_until_fetched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/journal.redb");
        let (a, b) = {
            let journal = Journal::open(&path).unwrap();
            assert!(journal.unfinished().unwrap().is_empty());
            let a = journal.accept(&request(1), 10).unwrap();
            let b = journal.accept(&request(2), 11).unwrap();
            let done = pb::AwaitProofResponse {
                status: pb::await_proof_response::Status::Completed as i32,
                proof: vec![7; 192],
                ..Default::default()
            };
            journal.finish(a, 10, &done, 20).unwrap();
            (a, b)
        };
        let journal = Journal::open(&path).unwrap();
        let pending = journal.unfinished().unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].0, b);
        assert_eq!(pending[0].1.request, Some(request(2)));
        let finished = journal.get(a).unwrap().unwrap();
        assert_eq!(finished.outcome.unwrap().proof, vec![7; 192]);
        assert!(finished.request.is_none());
        // Sequence numbers are never reused, even after removal.
        journal.remove(a).unwrap();
        assert!(journal.get(a).unwrap().is_none());
        assert!(journal.accept(&request(3), 12).unwrap() > b);
    }

    #[test]
    fn a_damaged_entry_is_quarantined_and_the_others_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.redb");
        let marker = b"damaged-on-disk-marker";
        let (good, bad, later) = {
            let journal = Journal::open(&path).unwrap();
            let good = journal.accept(&request(1), 1).unwrap();
            let bad = journal
                .accept(
                    &pb::SubmitProofRequest {
                        request_id: String::from_utf8(marker.to_vec()).unwrap(),
                        ..request(2)
                    },
                    2,
                )
                .unwrap();
            let later = journal.accept(&request(3), 3).unwrap();
            (good, bad, later)
        };
        // Flip bytes of the entry on disk: the request id's length byte
        // (just before it) now claims more bytes than its message holds,
        // so the entry no longer decodes. Every copy redb keeps is hit.
        let mut bytes = std::fs::read(&path).unwrap();
        let mut hits = 0;
        for at in 1..bytes.len().saturating_sub(marker.len()) {
            if &bytes[at..at + marker.len()] == marker {
                bytes[at - 1] = 0x7f;
                bytes[at..at + marker.len()].fill(0xff);
                hits += 1;
            }
        }
        assert!(hits > 0, "the entry was not found in the file");
        std::fs::write(&path, &bytes).unwrap();

        let journal = Journal::open(&path).unwrap();
        assert_eq!(journal.quarantined(), &[bad]);
        assert_eq!(journal.quarantine_len().unwrap(), 1);
        let pending: Vec<u64> = journal
            .unfinished()
            .unwrap()
            .iter()
            .map(|(s, _)| *s)
            .collect();
        assert_eq!(pending, vec![good, later]);
        assert!(journal.get(bad).unwrap().is_none());
        // New jobs keep their own numbers; the quarantine stays set aside.
        assert!(journal.accept(&request(4), 4).unwrap() > later);
        drop(journal);
        let journal = Journal::open(&path).unwrap();
        assert!(journal.quarantined().is_empty());
        assert_eq!(journal.quarantine_len().unwrap(), 1);
    }

    #[test]
    fn outcomes_expire() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(&dir.path().join("j.redb")).unwrap();
        let old = journal.accept(&request(1), 1).unwrap();
        let new = journal.accept(&request(2), 2).unwrap();
        let open = journal.accept(&request(3), 3).unwrap();
        let outcome = pb::AwaitProofResponse::default();
        journal.finish(old, 1, &outcome, 100).unwrap();
        journal.finish(new, 2, &outcome, 300).unwrap();
        assert_eq!(journal.expire(200).unwrap(), 1);
        assert!(journal.get(old).unwrap().is_none());
        assert!(journal.get(new).unwrap().is_some());
        assert_eq!(journal.unfinished().unwrap()[0].0, open);
    }
}
