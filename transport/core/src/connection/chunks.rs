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

    /// Where `dsn`'s chunk sits. Chunks are mostly one full payload each, so the position
    /// computed from the first chunk's length is tried first (it is right unless a short
    /// chunk lies before it), then a binary search; both find the same chunk, the only one
    /// at that DSN.
    fn index(&self, dsn: u64) -> Option<usize> {
        let first = self.chunks.front()?.r;
        if dsn < first.dsn {
            return None;
        }
        if first.len > 0 {
            let guess = (dsn - first.dsn) / u64::from(first.len);
            if let Ok(g) = usize::try_from(guess)
                && self.chunks.get(g).is_some_and(|c| c.r.dsn == dsn)
            {
                return Some(g);
            }
        }
        self.search(dsn)
    }

    /// Where `dsn`'s chunk sits, by binary search over the chunks (ordered by DSN).
    fn search(&self, dsn: u64) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The position guess and the binary search agree on every DSN, present or not, with
    /// short chunks among full ones, after data ACKs moved the front, and with a FIN.
    #[test]
    fn index_finds_the_chunk_a_binary_search_finds() {
        let mut t = ChunkTable::default();
        let mut dsn = 1000;
        for k in 0..400u64 {
            let len = if k % 37 == 5 { 1 + k as u32 } else { 1400 };
            t.push_fresh(
                ChunkRef {
                    dsn,
                    len,
                    fin: false,
                },
                SubflowId(0),
            );
            dsn += u64::from(len);
        }
        t.push_fresh(
            ChunkRef {
                dsn,
                len: 0,
                fin: true,
            },
            SubflowId(0),
        );
        for ack in [1000, 1000 + 3 * 1400, 1000 + 100 * 1400 + 7] {
            t.on_data_ack(ack);
            let mut found = 0;
            for probe in 900..dsn + 3000 {
                let i = t.index(probe);
                assert_eq!(i, t.search(probe), "dsn {probe}");
                found += usize::from(i.is_some());
            }
            assert_eq!(found, t.chunks.len());
        }
    }
}
