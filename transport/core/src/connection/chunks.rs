//! The outgoing stream's chunks (one packet of payload each, fixed boundaries, from the
//! peer's data ACK onward) and the connection-level reinjection queue.

use std::collections::VecDeque;

use crate::subflow::ChunkRef;
use crate::units::{PathMask, SubflowId};

/// State of one chunk of the outgoing stream.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    r: ChunkRef,
    /// Subflows that were given the chunk (first placement, reinjections, copies).
    carriers: PathMask,
    /// A packet carrying it was acknowledged on some subflow.
    delivered: bool,
    reinject_pending: bool,
}

#[derive(Debug, Default)]
pub(super) struct ChunkTable {
    /// Ordered by DSN, contiguous; the front is the oldest chunk not yet data-acked.
    chunks: VecDeque<Chunk>,
    /// DSNs waiting to be placed again by the scheduler (after an RTO).
    reinject: VecDeque<u64>,
    reinject_bytes: u64,
}

impl ChunkTable {
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The oldest chunk not yet data-acked and its carriers, unless it was delivered (what
    /// the out-of-tree kernel's opportunistic retransmission resends).
    pub fn oldest_undelivered(&self) -> Option<(ChunkRef, PathMask)> {
        self.chunks
            .front()
            .filter(|c| !c.delivered)
            .map(|c| (c.r, c.carriers))
    }

    /// DSN at the head of the reinjection queue (for the scheduler trace).
    pub fn reinject_front_dsn(&self) -> Option<u64> {
        self.reinject.front().copied()
    }

    pub fn reinject_bytes(&self) -> u64 {
        self.reinject_bytes
    }

    fn index(&self, dsn: u64) -> Option<usize> {
        let i = self.chunks.partition_point(|c| c.r.dsn < dsn);
        (i < self.chunks.len() && self.chunks[i].r.dsn == dsn).then_some(i)
    }

    /// A fresh chunk placed on `path`.
    pub fn push_fresh(&mut self, r: ChunkRef, path: SubflowId) {
        self.chunks.push_back(Chunk {
            r,
            carriers: PathMask::single(path),
            delivered: false,
            reinject_pending: false,
        });
    }

    pub fn add_carrier(&mut self, dsn: u64, path: SubflowId) {
        if let Some(i) = self.index(dsn) {
            self.chunks[i].carriers = self.chunks[i].carriers.with(path);
        }
    }

    pub fn mark_delivered(&mut self, c: ChunkRef) {
        if let Some(i) = self.index(c.dsn) {
            self.chunks[i].delivered = true;
        }
    }

    /// Delivered on some subflow, or already data-acked (no longer in the table).
    pub fn is_delivered(&self, dsn: u64) -> bool {
        self.index(dsn).is_none_or(|i| self.chunks[i].delivered)
    }

    /// Queues `dsn` for the scheduler to place again, once. Returns whether it was queued.
    pub fn queue_reinjection(&mut self, dsn: u64) -> bool {
        let Some(i) = self.index(dsn) else {
            return false;
        };
        let ch = &mut self.chunks[i];
        if ch.delivered || ch.reinject_pending {
            return false;
        }
        ch.reinject_pending = true;
        self.reinject_bytes += ch.r.len as u64;
        self.reinject.push_back(dsn);
        true
    }

    /// The subflows that carried the head of the reinjection queue, after dropping entries
    /// that were delivered meanwhile; None when the queue is empty.
    pub fn reinject_head(&mut self) -> Option<PathMask> {
        while let Some(&dsn) = self.reinject.front() {
            match self.index(dsn) {
                Some(i) if !self.chunks[i].delivered => return Some(self.chunks[i].carriers),
                Some(i) => {
                    self.chunks[i].reinject_pending = false;
                    self.reinject_bytes -= self.chunks[i].r.len as u64;
                    self.reinject.pop_front();
                }
                None => {
                    self.reinject.pop_front();
                }
            }
        }
        None
    }

    /// Takes the head of the reinjection queue for `path` if it is undelivered and was carried
    /// by exactly `carriers` (several reinjections share one decision only if the scheduler
    /// saw that `already_on`).
    pub fn take_reinjection(&mut self, path: SubflowId, carriers: PathMask) -> Option<ChunkRef> {
        let &dsn = self.reinject.front()?;
        let i = self.index(dsn)?;
        let ch = &mut self.chunks[i];
        if ch.delivered || ch.carriers != carriers {
            return None;
        }
        ch.reinject_pending = false;
        ch.carriers = ch.carriers.with(path);
        self.reinject_bytes -= ch.r.len as u64;
        self.reinject.pop_front();
        Some(ch.r)
    }

    /// Drops every chunk the peer's data ACK covers.
    pub fn on_data_ack(&mut self, data_ack: u64) {
        while self.chunks.front().is_some_and(|c| c.r.end() <= data_ack) {
            let c = self.chunks.pop_front().expect("front exists");
            if c.reinject_pending {
                self.reinject_bytes -= c.r.len as u64;
            }
        }
    }
}
