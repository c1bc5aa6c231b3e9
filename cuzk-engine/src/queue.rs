//! The engine's two work queues: a priority heap behind a mutex, with
//! condition variables for "an item arrived" and "room was freed".

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use parking_lot::{Condvar, Mutex};
use supraseal_c2::monotonic_ns;

/// Where an item stands in the queue: higher `priority` first, then the
/// older job (smaller `job` id), then the lower partition `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rank {
    pub(crate) priority: i32,
    pub(crate) job: u64,
    pub(crate) index: usize,
}

impl Ord for Rank {
    /// "Greater" means "served first", since `BinaryHeap` pops its maximum.
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .cmp(&other.priority)
            .then_with(|| other.job.cmp(&self.job))
            .then_with(|| other.index.cmp(&self.index))
    }
}

impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Anything the queue can hold: it must say where it ranks.
pub(crate) trait Ranked {
    /// The item's place in line.
    fn rank(&self) -> Rank;
}

/// A heap entry, ordered by its item's rank alone.
struct Entry<T>(T);

impl<T: Ranked> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0.rank() == other.0.rank()
    }
}

impl<T: Ranked> Eq for Entry<T> {}

impl<T: Ranked> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: Ranked> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.rank().cmp(&other.0.rank())
    }
}

struct State<T> {
    heap: BinaryHeap<Entry<T>>,
    closed: bool,
}

/// A priority queue shared by producers and worker threads. It can be
/// closed once, after which pushes are refused and pops return `None`.
pub(crate) struct WorkQueue<T> {
    state: Mutex<State<T>>,
    /// Signalled when an item arrives or the queue closes.
    arrived: Condvar,
    /// Signalled when an item leaves or the queue closes.
    freed: Condvar,
    /// How many items [`WorkQueue::push_bounded`] lets the queue hold.
    capacity: usize,
    /// Items of at least this priority skip that bound (the urgent lane).
    unbounded_from: Option<i32>,
}

impl<T: Ranked> WorkQueue<T> {
    /// An empty queue; `capacity` bounds only [`WorkQueue::push_bounded`].
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            state: Mutex::new(State {
                heap: BinaryHeap::new(),
                closed: false,
            }),
            arrived: Condvar::new(),
            freed: Condvar::new(),
            capacity,
            unbounded_from: None,
        }
    }

    /// The same queue, where [`WorkQueue::push_bounded`] never makes an
    /// item of at least `priority` wait (`None`: every item may wait).
    pub(crate) fn unbounded_from(self, priority: Option<i32>) -> Self {
        Self {
            unbounded_from: priority,
            ..self
        }
    }

    /// Adds `item` whatever the queue holds. Gives it back if closed.
    pub(crate) fn push(&self, item: T) -> Result<(), T> {
        self.push_within(usize::MAX, item)
    }

    /// Adds `item`, first waiting while the queue holds `capacity` items or
    /// more (unless its priority reaches `unbounded_from`). Gives it back
    /// if the queue is (or gets) closed.
    pub(crate) fn push_bounded(&self, item: T) -> Result<(), T> {
        let urgent = self
            .unbounded_from
            .is_some_and(|from| item.rank().priority >= from);
        let limit = if urgent { usize::MAX } else { self.capacity };
        self.push_within(limit, item)
    }

    fn push_within(&self, limit: usize, item: T) -> Result<(), T> {
        let mut state = self.state.lock();
        while !state.closed && state.heap.len() >= limit {
            self.freed.wait(&mut state);
        }
        if state.closed {
            return Err(item);
        }
        state.heap.push(Entry(item));
        drop(state);
        // Every waiter: some take only urgent items (pop_at_least), and
        // the one woken must not be one that leaves this item.
        self.arrived.notify_all();
        Ok(())
    }

    /// Takes the first item in line, waiting for one; `None` once closed.
    #[cfg(test)]
    pub(crate) fn pop(&self) -> Option<T> {
        self.pop_at_least(None).map(|(item, _)| item)
    }

    /// Takes the first item in line once it ranks at least `min_priority`
    /// (`None`: any item), waiting for one; `None` once closed. With it
    /// comes the instant ([`monotonic_ns`]) it was taken, read under the
    /// queue's lock: the instants of the items taken follow the order in
    /// which they were taken and pushed. The first in line is the one to
    /// look at, since the queue serves higher priorities first.
    pub(crate) fn pop_at_least(&self, min_priority: Option<i32>) -> Option<(T, u64)> {
        let mut state = self.state.lock();
        loop {
            if state.closed {
                return None;
            }
            let eligible = state.heap.peek().is_some_and(|Entry(first)| {
                min_priority.is_none_or(|min| first.rank().priority >= min)
            });
            if let Some(Entry(item)) = eligible.then(|| state.heap.pop()).flatten() {
                let taken_ns = monotonic_ns();
                drop(state);
                self.freed.notify_one();
                return Some((item, taken_ns));
            }
            self.arrived.wait(&mut state);
        }
    }

    /// Removes every item for which `keep` is false and returns them, so
    /// that the caller drops them outside the queue's mutex.
    pub(crate) fn remove_unless(&self, mut keep: impl FnMut(&T) -> bool) -> Vec<T> {
        let mut state = self.state.lock();
        let (kept, removed): (Vec<_>, Vec<_>) =
            state.heap.drain().partition(|Entry(item)| keep(item));
        state.heap.extend(kept);
        drop(state);
        if !removed.is_empty() {
            self.freed.notify_all();
        }
        removed.into_iter().map(|Entry(item)| item).collect()
    }

    /// Closes the queue, wakes every waiter and returns what it still held.
    pub(crate) fn close(&self) -> Vec<T> {
        let mut state = self.state.lock();
        state.closed = true;
        let left = std::mem::take(&mut state.heap).into_vec();
        drop(state);
        self.arrived.notify_all();
        self.freed.notify_all();
        left.into_iter().map(|Entry(item)| item).collect()
    }

    /// Number of items waiting.
    pub(crate) fn len(&self) -> usize {
        self.state.lock().heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Ranked for Rank {
        fn rank(&self) -> Rank {
            *self
        }
    }

    #[test]
    fn the_urgent_lane_takes_only_urgent_items_and_skips_the_bound() {
        let queue = std::sync::Arc::new(WorkQueue::new(1).unbounded_from(Some(3)));
        queue.push_bounded(rank(0, 1, 0)).unwrap();
        // Full for ordinary items, not for urgent ones.
        queue.push_bounded(rank(3, 2, 0)).unwrap();
        assert_eq!(queue.len(), 2);
        let urgent = {
            let queue = queue.clone();
            std::thread::spawn(move || {
                let first = queue.pop_at_least(Some(3)).map(|(r, _)| r);
                let second = queue.pop_at_least(Some(3)).map(|(r, _)| r);
                (first, second)
            })
        };
        // The urgent taker leaves the ordinary item for an ordinary one and
        // waits for the next urgent item.
        while queue.len() != 1 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(queue.pop(), Some(rank(0, 1, 0)));
        queue.push(rank(0, 3, 0)).unwrap();
        queue.push(rank(4, 4, 0)).unwrap();
        assert_eq!(
            urgent.join().unwrap(),
            (Some(rank(3, 2, 0)), Some(rank(4, 4, 0)))
        );
        assert_eq!(queue.pop(), Some(rank(0, 3, 0)));
    }

    fn rank(priority: i32, job: u64, index: usize) -> Rank {
        Rank {
            priority,
            job,
            index,
        }
    }

    #[test]
    fn pops_by_priority_then_job_age_then_index() {
        let queue = WorkQueue::new(usize::MAX);
        for item in [
            rank(0, 2, 0),
            rank(0, 1, 1),
            rank(5, 3, 1),
            rank(0, 1, 0),
            rank(5, 3, 0),
        ] {
            queue.push(item).unwrap();
        }
        let order: Vec<Rank> = (0..5).map(|_| queue.pop().unwrap()).collect();
        let expected = [
            rank(5, 3, 0),
            rank(5, 3, 1),
            rank(0, 1, 0),
            rank(0, 1, 1),
            rank(0, 2, 0),
        ];
        assert_eq!(order, expected);
    }

    #[test]
    fn close_refuses_pushes_and_returns_what_was_left() {
        let queue = WorkQueue::new(1);
        queue.push(rank(0, 1, 0)).unwrap();
        assert_eq!(queue.close(), vec![rank(0, 1, 0)]);
        assert!(queue.push(rank(0, 2, 0)).is_err());
        assert!(queue.push_bounded(rank(0, 2, 0)).is_err());
        assert!(queue.pop().is_none());
    }

    #[test]
    fn bounded_push_waits_for_room() {
        let queue = std::sync::Arc::new(WorkQueue::new(1));
        queue.push_bounded(rank(0, 1, 0)).unwrap();
        let producer = {
            let queue = queue.clone();
            std::thread::spawn(move || queue.push_bounded(rank(0, 1, 1)))
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(queue.len(), 1, "the second push must wait for room");
        assert_eq!(queue.pop(), Some(rank(0, 1, 0)));
        producer.join().unwrap().unwrap();
        assert_eq!(queue.pop(), Some(rank(0, 1, 1)));
    }

    #[test]
    fn remove_unless_takes_out_one_jobs_items() {
        let queue = WorkQueue::new(usize::MAX);
        for item in [rank(0, 1, 0), rank(0, 2, 0), rank(0, 1, 1)] {
            queue.push(item).unwrap();
        }
        let removed = queue.remove_unless(|r| r.job != 1);
        assert_eq!(removed.len(), 2);
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.pop(), Some(rank(0, 2, 0)));
    }
}
