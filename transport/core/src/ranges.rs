//! A set of received packet numbers as disjoint inclusive ranges, newest last, capped in size
//! (the oldest ranges are forgotten: the sender has declared those packets lost long ago).

use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    /// Ascending, disjoint, non-adjacent inclusive ranges.
    ranges: VecDeque<(u64, u64)>,
    cap: usize,
}

impl RangeSet {
    pub fn new(cap: usize) -> RangeSet {
        RangeSet {
            ranges: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    /// Inserts `pn`; returns false if it was already present (a duplicate).
    pub fn insert(&mut self, pn: u64) -> bool {
        // Fast path: extends the newest range (in-order arrival).
        if let Some(last) = self.ranges.back_mut() {
            if pn == last.1 + 1 {
                last.1 = pn;
                return true;
            }
            if pn > last.1 + 1 {
                self.ranges.push_back((pn, pn));
                self.trim();
                return true;
            }
        } else {
            self.ranges.push_back((pn, pn));
            return true;
        }
        // Slow path: out of order. Find the first range with end ≥ pn.
        let i = self.ranges.partition_point(|r| r.1 < pn);
        if i < self.ranges.len() && self.ranges[i].0 <= pn {
            return false;
        }
        let joins_prev = i > 0 && self.ranges[i - 1].1 + 1 == pn;
        let joins_next = i < self.ranges.len() && self.ranges[i].0 == pn + 1;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.ranges[i - 1].1 = self.ranges[i].1;
                self.ranges.remove(i);
            }
            (true, false) => self.ranges[i - 1].1 = pn,
            (false, true) => self.ranges[i].0 = pn,
            (false, false) => {
                if i == 0 && self.ranges.len() >= self.cap {
                    return true; // older than everything we remember
                }
                self.ranges.insert(i, (pn, pn));
                self.trim();
            }
        }
        true
    }

    fn trim(&mut self) {
        while self.ranges.len() > self.cap {
            self.ranges.pop_front();
        }
    }

    pub fn largest(&self) -> Option<u64> {
        self.ranges.back().map(|r| r.1)
    }

    /// Newest first (the order of the ACK frame).
    pub fn iter_desc(&self) -> impl Iterator<Item = (u64, u64)> + Clone + '_ {
        self.ranges.iter().rev().copied()
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_and_detects_duplicates() {
        let mut s = RangeSet::new(8);
        for pn in [0, 1, 2, 5, 6, 4, 9] {
            assert!(s.insert(pn));
        }
        assert!(!s.insert(5));
        assert_eq!(
            s.iter_desc().collect::<Vec<_>>(),
            vec![(9, 9), (4, 6), (0, 2)]
        );
        assert!(s.insert(3));
        assert_eq!(s.iter_desc().collect::<Vec<_>>(), vec![(9, 9), (0, 6)]);
        assert_eq!(s.largest(), Some(9));
    }

    #[test]
    fn cap_forgets_the_oldest() {
        let mut s = RangeSet::new(2);
        for pn in [0, 2, 4, 6] {
            s.insert(pn);
        }
        assert_eq!(s.iter_desc().collect::<Vec<_>>(), vec![(6, 6), (4, 4)]);
    }
}
