//! The job journal: every accepted job, in an embedded database (redb), so
//! that nothing accepted is lost to a crash or a restart.
//!
//! A job is written, with its request, before `SubmitProof` answers (a
//! durable commit). Its outcome replaces the request when it finishes
//! (durable too). After a restart every entry without an outcome runs
//! again; an outcome stays until it is fetched (`AwaitProof` or `Prove`
//! hands it out), until it expires, or until newer outcomes push it out.
//! Removing a fetched outcome is not forced to disk: a crash may bring it
//! back, never lose one.
//!
//! Compaction forgets finished entries (outcomes nobody fetched), oldest
//! finished first: those recorded before a cutoff ([`Journal::expire`]),
//! and those beyond the journal's `keep_finished` newest, at open and as
//! each outcome is recorded. An index of the finished entries by the time
//! they finished makes both a walk over the entries forgotten, never over
//! the whole table; it is rebuilt at every open (which reads every entry
//! anyway), so a journal written before it existed gets one. An entry
//! without an outcome is never forgotten.
//!
//! An entry that no longer decodes (bytes damaged on disk, or a foreign
//! writer) does not stop the daemon: opening the journal moves it, bytes
//! intact, to a quarantine table (never run, kept for inspection) and
//! reports it, and every other entry loads.

// redb's error is large; it is boxed where it leaves this module.
#![allow(clippy::result_large_err)]

use std::path::{Path, PathBuf};

use parking_lot::RwLock;
use prost::Message;
use redb::{Database, Durability, ReadableTable, ReadableTableMetadata, TableDefinition};

use crate::pb;

/// Jobs by sequence number: an encoded [`Entry`].
const JOBS: TableDefinition<u64, &[u8]> = TableDefinition::new("jobs");
/// Damaged entries, by sequence number: their bytes as found.
const QUARANTINE: TableDefinition<u64, &[u8]> = TableDefinition::new("quarantine");
/// The finished entries, by `(finished_unix_ms, seq)`: the order
/// compaction forgets them in.
const FINISHED: TableDefinition<(u64, u64), ()> = TableDefinition::new("finished");
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
    /// The open database; `None` after an I/O failure whose reopening
    /// failed too (the next call tries again).
    db: RwLock<Option<Database>>,
    /// Finished entries kept at most (at least 1).
    keep_finished: u64,
    /// What opening this journal found and did.
    opened: Opened,
}

/// What [`Journal::open`] set aside or forgot.
#[derive(Default)]
struct Opened {
    /// Entries that did not decode, moved to the quarantine table.
    quarantined: Vec<u64>,
    /// Finished entries beyond `keep_finished`, forgotten.
    compacted: Vec<u64>,
}

impl Journal {
    /// Opens the journal at `path`, creating it (and its directory) if
    /// needed; a journal left by a crash is repaired on open. At most
    /// `keep_finished` finished entries are kept (at least one): the oldest
    /// beyond are forgotten now and whenever an outcome is recorded.
    pub fn open(path: &Path, keep_finished: usize) -> Result<Self, JournalError> {
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
            db: RwLock::new(Some(db)),
            keep_finished: keep_finished.max(1) as u64,
            opened: Opened::default(),
        };
        let keep = journal.keep_finished;
        journal.opened = journal.write("check its entries", Durability::Immediate, |txn| {
            check_entries(txn, keep)
        })?;
        Ok(journal)
    }

    /// The entries that did not decode when the journal was opened: moved
    /// to its quarantine table, not run.
    pub fn quarantined(&self) -> &[u64] {
        &self.opened.quarantined
    }

    /// The finished entries forgotten when the journal was opened, beyond
    /// `keep_finished` (a journal kept with a larger limit before).
    pub fn compacted(&self) -> &[u64] {
        &self.opened.compacted
    }

    /// Whether `seq` was ever given to a job (its entry may be gone since:
    /// fetched, expired, compacted or quarantined).
    pub fn was_accepted(&self, seq: u64) -> Result<bool, JournalError> {
        let next = self.read("read the next job number", |txn| {
            let meta = txn.open_table(META)?;
            let next = meta.get(NEXT_SEQ)?.map_or(1, |v| v.value());
            Ok(next)
        })?;
        Ok(seq >= 1 && seq < next)
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

    /// Records job `seq`'s outcome durably, dropping its request, and
    /// forgets the oldest finished entries beyond `keep_finished`: returns
    /// those (none, but for a journal full of unfetched outcomes).
    pub fn finish(
        &self,
        seq: u64,
        accepted_unix_ms: u64,
        outcome: &pb::AwaitProofResponse,
        finished_unix_ms: u64,
    ) -> Result<Vec<u64>, JournalError> {
        let entry = Entry {
            accepted_unix_ms,
            request: None,
            outcome: Some(outcome.clone()),
            finished_unix_ms,
        };
        let keep = self.keep_finished;
        self.write("record an outcome", Durability::Immediate, |txn| {
            let mut jobs = txn.open_table(JOBS)?;
            let mut finished = txn.open_table(FINISHED)?;
            jobs.insert(seq, entry.encode_to_vec().as_slice())?;
            finished.insert((finished_unix_ms, seq), ())?;
            forget_oldest(&mut jobs, &mut finished, |_, held| held > keep)
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
            let finished_unix_ms = txn
                .open_table(JOBS)?
                .remove(seq)?
                .and_then(|bytes| Entry::decode(bytes.value()).ok())
                .filter(|entry| entry.outcome.is_some())
                .map(|entry| entry.finished_unix_ms);
            if let Some(at) = finished_unix_ms {
                txn.open_table(FINISHED)?.remove((at, seq))?;
            }
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

    /// Forgets outcomes recorded before `cutoff_unix_ms`; returns them.
    pub fn expire(&self, cutoff_unix_ms: u64) -> Result<Vec<u64>, JournalError> {
        self.write("expire outcomes", Durability::Immediate, |txn| {
            let mut jobs = txn.open_table(JOBS)?;
            let mut finished = txn.open_table(FINISHED)?;
            forget_oldest(&mut jobs, &mut finished, |at, _| at < cutoff_unix_ms)
        })
    }

    /// Finished entries held (outcomes nobody fetched yet).
    pub fn finished_len(&self) -> Result<u64, JournalError> {
        self.read("count finished entries", |txn| {
            Ok(txn.open_table(FINISHED)?.len()?)
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
        self.with_db(what, |db| {
            let mut txn = db.begin_write()?;
            txn.set_durability(durability);
            let value = body(&txn)?;
            txn.commit()?;
            Ok(value)
        })
    }

    fn read<T>(
        &self,
        what: &'static str,
        body: impl FnOnce(&redb::ReadTransaction) -> Result<T, redb::Error>,
    ) -> Result<T, JournalError> {
        self.with_db(what, |db| body(&db.begin_read()?))
    }

    /// Runs `op` on the database. After an I/O error (a full disk, most
    /// likely) redb refuses every later transaction until the file is
    /// opened again, which repairs it; so the journal reopens it then, and
    /// the call after the disk has room again succeeds instead of the
    /// daemon needing a restart. This call still fails.
    fn with_db<T>(
        &self,
        what: &'static str,
        op: impl FnOnce(&Database) -> Result<T, redb::Error>,
    ) -> Result<T, JournalError> {
        if self.db.read().is_none() {
            self.reopen();
        }
        let result = match self.db.read().as_ref() {
            Some(db) => op(db),
            None => Err(redb::Error::PreviousIo),
        };
        result.map_err(|source| {
            if matches!(source, redb::Error::Io(_) | redb::Error::PreviousIo) {
                self.reopen();
            }
            self.fail(what, source)
        })
    }

    /// Closes the database (so that redb's file lock is let go) and opens
    /// it again; `None` where that fails.
    fn reopen(&self) {
        let mut db = self.db.write();
        drop(db.take());
        match Database::create(&self.path) {
            Ok(opened) => *db = Some(opened),
            Err(err) => tracing::warn!(journal = %self.path.display(), error = %err,
                "job journal: cannot reopen it after an I/O error; trying again at the next call"),
        }
    }

    fn fail(&self, what: &'static str, source: redb::Error) -> JournalError {
        JournalError::Database {
            path: self.path.clone(),
            what,
            source: Box::new(source),
        }
    }
}

/// Makes every table (so that reads of a fresh journal find them), sets
/// damaged entries aside, rebuilds the index of finished entries and
/// forgets the oldest finished ones beyond `keep_finished`.
fn check_entries(txn: &redb::WriteTransaction, keep_finished: u64) -> Result<Opened, redb::Error> {
    txn.open_table(META)?;
    let mut jobs = txn.open_table(JOBS)?;
    let mut quarantine = txn.open_table(QUARANTINE)?;
    let mut finished = txn.open_table(FINISHED)?;
    let mut damaged = Vec::new();
    let mut done = Vec::new();
    for item in jobs.iter()? {
        let (seq, bytes) = item?;
        match Entry::decode(bytes.value()) {
            Ok(entry) if entry.outcome.is_some() => {
                done.push((entry.finished_unix_ms, seq.value()));
            }
            Ok(_) => {}
            Err(_) => damaged.push((seq.value(), bytes.value().to_vec())),
        }
    }
    for (seq, bytes) in &damaged {
        jobs.remove(*seq)?;
        quarantine.insert(*seq, bytes.as_slice())?;
    }
    finished.retain(|_, ()| false)?;
    for key in done {
        finished.insert(key, ())?;
    }
    let compacted = forget_oldest(&mut jobs, &mut finished, |_, held| held > keep_finished)?;
    Ok(Opened {
        quarantined: damaged.into_iter().map(|(seq, _)| seq).collect(),
        compacted,
    })
}

/// Forgets finished entries, the oldest finished first, while `forget`
/// says so of the oldest (when it finished, how many are held); returns
/// the jobs forgotten.
fn forget_oldest(
    jobs: &mut redb::Table<u64, &'static [u8]>,
    finished: &mut redb::Table<(u64, u64), ()>,
    mut forget: impl FnMut(u64, u64) -> bool,
) -> Result<Vec<u64>, redb::Error> {
    let mut forgotten = Vec::new();
    loop {
        let oldest = finished.first()?.map(|(key, _)| key.value());
        let Some((at, seq)) = oldest else { break };
        if !forget(at, finished.len()?) {
            break;
        }
        finished.remove((at, seq))?;
        // Only finished jobs are indexed and job numbers are never reused,
        // so this entry has its outcome; checked all the same, because
        // forgetting a job that has not run would lose it.
        let has_outcome = jobs
            .get(seq)?
            .is_some_and(|bytes| Entry::decode(bytes.value()).is_ok_and(|e| e.outcome.is_some()));
        if has_outcome {
            jobs.remove(seq)?;
            forgotten.push(seq);
        }
    }
    Ok(forgotten)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A limit the tests that are not about it never reach.
    const KEEP: usize = 1000;

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
            let journal = Journal::open(&path, KEEP).unwrap();
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
        let journal = Journal::open(&path, KEEP).unwrap();
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
            let journal = Journal::open(&path, KEEP).unwrap();
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

        let journal = Journal::open(&path, KEEP).unwrap();
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
        let journal = Journal::open(&path, KEEP).unwrap();
        assert!(journal.quarantined().is_empty());
        assert_eq!(journal.quarantine_len().unwrap(), 1);
    }

    #[test]
    fn outcomes_expire() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(&dir.path().join("j.redb"), KEEP).unwrap();
        let old = journal.accept(&request(1), 1).unwrap();
        let new = journal.accept(&request(2), 2).unwrap();
        let open = journal.accept(&request(3), 3).unwrap();
        let outcome = pb::AwaitProofResponse::default();
        journal.finish(old, 1, &outcome, 100).unwrap();
        journal.finish(new, 2, &outcome, 300).unwrap();
        assert_eq!(journal.expire(200).unwrap(), vec![old]);
        assert!(journal.get(old).unwrap().is_none());
        assert!(journal.get(new).unwrap().is_some());
        assert_eq!(journal.unfinished().unwrap()[0].0, open);
        assert_eq!(journal.finished_len().unwrap(), 1);
        assert!(journal.was_accepted(old).unwrap());
        assert!(!journal.was_accepted(open + 1).unwrap());
    }

    /// Accepts `jobs` jobs at times 1, 2, ...; returns their numbers.
    fn accept_jobs(journal: &Journal, jobs: u64) -> Vec<u64> {
        (1..=jobs)
            .map(|n| journal.accept(&request(n), n).unwrap())
            .collect()
    }

    fn outcome(seq: u64) -> pb::AwaitProofResponse {
        pb::AwaitProofResponse {
            job_id: crate::jobs::job_id(seq),
            status: pb::await_proof_response::Status::Completed as i32,
            ..Default::default()
        }
    }

    /// The jobs whose entries the journal holds, of `jobs`.
    fn held(journal: &Journal, jobs: &[u64]) -> Vec<u64> {
        let held = jobs.iter().filter(|&&s| journal.get(s).unwrap().is_some());
        held.copied().collect()
    }

    #[test]
    fn compaction_keeps_the_newest_finished_and_every_unfinished_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.redb");
        let jobs = {
            let journal = Journal::open(&path, 3).unwrap();
            let jobs = accept_jobs(&journal, 8);
            // Six finish, not in acceptance order: 7 first, 0 last; 2 and 5
            // never do.
            let mut forgotten = Vec::new();
            for (at, &i) in [7, 1, 3, 4, 6, 0].iter().enumerate() {
                let seq = jobs[i];
                let at = 100 + at as u64;
                forgotten.extend(journal.finish(seq, i as u64, &outcome(seq), at).unwrap());
            }
            // The three that finished first went, as the fourth, fifth and
            // sixth were recorded.
            assert_eq!(forgotten, vec![jobs[7], jobs[1], jobs[3]]);
            assert_eq!(journal.finished_len().unwrap(), 3);
            let kept = [jobs[0], jobs[4], jobs[6], jobs[2], jobs[5]];
            assert_eq!(held(&journal, &jobs), sorted(&kept));
            // A fetched outcome leaves the count: nothing more is forgotten
            // when the next one finishes.
            journal.remove(jobs[4]).unwrap();
            assert!(journal
                .finish(jobs[2], 2, &outcome(jobs[2]), 200)
                .unwrap()
                .is_empty());
            jobs
        };
        // Reopened with a smaller limit: the oldest finished beyond it go
        // at open, the unfinished one stays and is still to run.
        let journal = Journal::open(&path, 2).unwrap();
        assert_eq!(journal.compacted(), &[jobs[6]]);
        assert_eq!(held(&journal, &jobs), vec![jobs[0], jobs[2], jobs[5]]);
        let pending: Vec<u64> = journal.unfinished().unwrap().iter().map(|e| e.0).collect();
        assert_eq!(pending, vec![jobs[5]]);
        drop(journal);
        let journal = Journal::open(&path, 2).unwrap();
        assert!(journal.compacted().is_empty());
        assert_eq!(held(&journal, &jobs), vec![jobs[0], jobs[2], jobs[5]]);
    }

    fn sorted(seqs: &[u64]) -> Vec<u64> {
        let mut seqs = seqs.to_vec();
        seqs.sort_unstable();
        seqs
    }

    #[test]
    fn a_journal_without_the_index_gets_one_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.redb");
        let jobs = {
            let journal = Journal::open(&path, KEEP).unwrap();
            let jobs = accept_jobs(&journal, 5);
            for (at, &seq) in jobs[..4].iter().enumerate() {
                journal
                    .finish(seq, 0, &outcome(seq), 10 + at as u64)
                    .unwrap();
            }
            // As a version before the index left it.
            let txn = journal.db.read().as_ref().unwrap().begin_write().unwrap();
            assert!(txn.delete_table(FINISHED).unwrap());
            txn.commit().unwrap();
            jobs
        };
        let journal = Journal::open(&path, 2).unwrap();
        assert_eq!(journal.compacted(), &jobs[..2]);
        assert_eq!(held(&journal, &jobs), jobs[2..].to_vec());
        assert_eq!(journal.finished_len().unwrap(), 2);
        assert_eq!(journal.expire(13).unwrap(), vec![jobs[2]]);
        assert_eq!(held(&journal, &jobs), jobs[3..].to_vec());
    }
}
