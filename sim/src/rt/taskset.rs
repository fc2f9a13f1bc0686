//! A growable bit set of task ids, in ascending id order.
//!
//! The scheduler keeps the enabled tasks in one of these: picking the k-th
//! enabled task is a popcount walk, inserting and removing are one word
//! operation, and iteration order is the task id order, never an address or
//! hash order.

/// Dense index of a task within one execution (spawn order, main task is 0).
pub type TaskId = u32;

/// A set of task ids.
#[derive(Clone, Debug, Default)]
pub struct TaskSet {
    words: Vec<u64>,
    len: u32,
}

impl PartialEq for TaskSet {
    /// Same members (however many words each has grown to).
    fn eq(&self, other: &TaskSet) -> bool {
        let n = self.words.len().max(other.words.len());
        self.len == other.len
            && (0..n).all(|i| self.words.get(i).copied().unwrap_or(0) == other.words.get(i).copied().unwrap_or(0))
    }
}

impl Eq for TaskSet {}

impl TaskSet {
    /// An empty set.
    pub fn new() -> TaskSet {
        TaskSet::default()
    }

    /// Removes every member, keeping the allocation.
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.len = 0;
    }

    /// Number of members.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True if the set has no member.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True if `t` is a member.
    #[inline]
    pub fn contains(&self, t: TaskId) -> bool {
        let (w, b) = ((t / 64) as usize, t % 64);
        self.words.get(w).is_some_and(|x| x & (1u64 << b) != 0)
    }

    /// Adds `t`; returns false if it was already there.
    #[inline]
    pub fn insert(&mut self, t: TaskId) -> bool {
        let (w, b) = ((t / 64) as usize, t % 64);
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        let bit = 1u64 << b;
        if self.words[w] & bit != 0 {
            return false;
        }
        self.words[w] |= bit;
        self.len += 1;
        true
    }

    /// Removes `t`; returns false if it was not there.
    #[inline]
    pub fn remove(&mut self, t: TaskId) -> bool {
        let (w, b) = ((t / 64) as usize, t % 64);
        let bit = 1u64 << b;
        match self.words.get_mut(w) {
            Some(x) if *x & bit != 0 => {
                *x &= !bit;
                self.len -= 1;
                true
            }
            _ => false,
        }
    }

    /// The `k`-th member in ascending order (`k < len`).
    #[inline]
    pub fn nth(&self, mut k: usize) -> TaskId {
        // Clears the k lowest members one by one rather than counting bits:
        // the baseline x86-64 target has no popcount instruction, and k is
        // small (a pick among the enabled tasks; 0 when only one is).
        for (i, &w) in self.words.iter().enumerate() {
            let mut x = w;
            while x != 0 && k > 0 {
                x &= x - 1;
                k -= 1;
            }
            if x != 0 {
                return i as TaskId * 64 + x.trailing_zeros();
            }
        }
        panic!("TaskSet::nth out of range")
    }

    /// Position of `t` among the members (its `k` for [`TaskSet::nth`]).
    pub fn rank(&self, t: TaskId) -> Option<usize> {
        if !self.contains(t) {
            return None;
        }
        let (w, b) = ((t / 64) as usize, t % 64);
        let below: usize = self.words[..w].iter().map(|x| x.count_ones() as usize).sum();
        Some(below + (self.words[w] & ((1u64 << b) - 1)).count_ones() as usize)
    }

    /// The members in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut x = w;
            std::iter::from_fn(move || {
                if x == 0 {
                    None
                } else {
                    let b = x.trailing_zeros();
                    x &= x - 1;
                    Some(i as TaskId * 64 + b)
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_remove_nth_rank() {
        let mut s = TaskSet::new();
        for t in [3, 70, 0, 64, 129] {
            assert!(s.insert(t));
        }
        assert!(!s.insert(3));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 3, 64, 70, 129]);
        assert_eq!((0..5).map(|k| s.nth(k)).collect::<Vec<_>>(), vec![0, 3, 64, 70, 129]);
        assert_eq!(s.rank(70), Some(3));
        assert!(s.remove(64));
        assert!(!s.remove(64));
        assert_eq!(s.len(), 4);
        assert_eq!(s.nth(2), 70);
        s.clear();
        assert!(s.is_empty() && !s.contains(0));
    }
}
