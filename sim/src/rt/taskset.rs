//! A growable bit set of task ids, in ascending id order.
//!
//! The scheduler keeps the enabled tasks in one of these: picking the k-th
//! enabled task is a popcount walk, inserting and removing are one word
//! operation, and iteration order is the task id order, never an address or
//! hash order.

/// Dense index of a task within one execution (spawn order, main task is 0).
pub type TaskId = u32;

/// A set of task ids.
///
/// Tasks 0..64 (every task of nearly every model) live in one inline word,
/// so the scheduler's commonest operations are a bit operation with no
/// bounds check or pointer to follow; later ids go to `high`.
#[derive(Debug, Default)]
pub struct TaskSet {
    /// Tasks 0..64, bit `t`.
    low: u64,
    /// Tasks from 64 on: word `i` holds tasks `64 * (i + 1)..64 * (i + 2)`.
    high: Vec<u64>,
    /// Every word of `high` before this one is empty: where a walk starts.
    /// A long run spawns tasks for good and they finish in about their id
    /// order, so the live ones sit in the last words; a pick that counted
    /// through thousands of empty words was a sixth of an 8,000-call ttrpc
    /// run.
    first: u32,
    len: u32,
}

impl Clone for TaskSet {
    fn clone(&self) -> TaskSet {
        TaskSet { low: self.low, high: self.high.clone(), first: self.first, len: self.len }
    }

    /// Copies `source` into this set's own words: no allocation once it has
    /// as many (a scheduler that copies a set on every spin of a loop keeps
    /// one to copy into).
    fn clone_from(&mut self, source: &TaskSet) {
        self.low = source.low;
        self.high.clone_from(&source.high);
        self.first = source.first;
        self.len = source.len;
    }
}

impl PartialEq for TaskSet {
    /// Same members (however many words each has grown to).
    fn eq(&self, other: &TaskSet) -> bool {
        let n = self.high.len().max(other.high.len());
        self.len == other.len
            && self.low == other.low
            && (0..n).all(|i| self.high.get(i).copied().unwrap_or(0) == other.high.get(i).copied().unwrap_or(0))
    }
}

impl Eq for TaskSet {}

impl TaskSet {
    pub fn new() -> TaskSet {
        TaskSet::default()
    }

    /// Empties the set, keeping its words for the next run.
    pub fn clear(&mut self) {
        self.low = 0;
        self.high.iter_mut().for_each(|w| *w = 0);
        // Past every word: an insert lowers it to its own.
        self.first = self.high.len() as u32;
        self.len = 0;
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn contains(&self, t: TaskId) -> bool {
        if t < 64 {
            return self.low & (1u64 << t) != 0;
        }
        let (w, b) = ((t / 64 - 1) as usize, t % 64);
        self.high.get(w).is_some_and(|x| x & (1u64 << b) != 0)
    }

    /// Adds `t`; false if it was there already.
    #[inline]
    pub fn insert(&mut self, t: TaskId) -> bool {
        let (word, bit) = if t < 64 { (&mut self.low, 1u64 << t) } else { (self.high_word(t), 1u64 << (t % 64)) };
        if *word & bit != 0 {
            return false;
        }
        *word |= bit;
        self.len += 1;
        if t >= 64 {
            self.first = self.first.min(t / 64 - 1);
        }
        true
    }

    /// The word of task `t >= 64`, made if the set has not grown that far
    /// (apart from `insert`: a set kept across runs rarely grows).
    #[cold]
    #[inline(never)]
    fn high_word(&mut self, t: TaskId) -> &mut u64 {
        let w = (t / 64 - 1) as usize;
        if w >= self.high.len() {
            self.high.resize(w + 1, 0);
        }
        &mut self.high[w]
    }

    /// Removes `t`; false if it was not there.
    #[inline]
    pub fn remove(&mut self, t: TaskId) -> bool {
        let word = if t < 64 {
            &mut self.low
        } else {
            match self.high.get_mut((t / 64 - 1) as usize) {
                Some(x) => x,
                None => return false,
            }
        };
        let bit = 1u64 << (t % 64);
        if *word & bit == 0 {
            return false;
        }
        *word &= !bit;
        self.len -= 1;
        if *word == 0 && t >= 64 && t / 64 - 1 == self.first {
            self.skip_empty();
        }
        true
    }

    /// Moves `first` past the empty words it points at (none past the last).
    #[cold]
    #[inline(never)]
    fn skip_empty(&mut self) {
        let n = self.high.len() as u32;
        while self.first < n && self.high[self.first as usize] == 0 {
            self.first += 1;
        }
    }

    /// The `k`-th member in ascending order (`k < len`).
    #[inline]
    pub fn nth(&self, mut k: usize) -> TaskId {
        // Clearing bits, not counting them: a popcount is a long sequence
        // on the baseline x86-64 the build targets.
        let mut w = self.low;
        while k > 0 && w != 0 {
            w &= w - 1;
            k -= 1;
        }
        if w != 0 {
            return w.trailing_zeros();
        }
        self.nth_high(k)
    }

    /// The `k`-th member of `high`.
    #[inline(never)]
    fn nth_high(&self, mut k: usize) -> TaskId {
        let first = self.first as usize;
        for (i, &w) in self.high[first..].iter().enumerate() {
            let n = w.count_ones() as usize;
            if k < n {
                return (first + i) as TaskId * 64 + 64 + nth_bit(w, k);
            }
            k -= n;
        }
        panic!("TaskSet::nth out of range")
    }

    /// Position of `t` among the members, if it is one.
    pub fn rank(&self, t: TaskId) -> Option<usize> {
        if !self.contains(t) {
            return None;
        }
        if t < 64 {
            return Some((self.low & ((1u64 << t) - 1)).count_ones() as usize);
        }
        let (w, b) = ((t / 64 - 1) as usize, t % 64);
        let below: usize = self.low.count_ones() as usize
            + self.high[self.first as usize..w].iter().map(|x| x.count_ones() as usize).sum::<usize>();
        Some(below + (self.high[w] & ((1u64 << b) - 1)).count_ones() as usize)
    }

    /// Members in ascending order.
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        let first = self.first as usize;
        Iter { high: &self.high[first..], word: 0, base: 0, skipped: first as TaskId, bits: self.low }
    }
}

/// The members of a [`TaskSet`] in ascending order: a walk over its words
/// (a chain of iterator adapters here cost PCT a third of its time).
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    /// The set's `high` from its `first` word on.
    high: &'a [u64],
    /// The next word of `high` to load.
    word: usize,
    /// The id of bit 0 of the word `bits` came from.
    base: TaskId,
    /// The set's `first`: the words of `high` not in `high` here.
    skipped: TaskId,
    /// The members of that word not yet given.
    bits: u64,
}

impl Iterator for Iter<'_> {
    type Item = TaskId;

    #[inline]
    fn next(&mut self) -> Option<TaskId> {
        while self.bits == 0 {
            self.bits = *self.high.get(self.word)?;
            self.word += 1;
            self.base = (self.skipped + self.word as TaskId) * 64;
        }
        let b = self.bits.trailing_zeros();
        self.bits &= self.bits - 1;
        Some(self.base + b)
    }
}

/// A [`TaskSet`] kept as it was, with only its non-empty words stored.
///
/// What an exploration keeps at every step of a long execution, where the
/// enabled tasks are some long-lived ones with low ids and some new ones
/// with ids in the thousands: a copy of the `TaskSet` would carry every
/// word up to the highest id.
///
/// ```
/// let mut s = sim::TaskSet::new();
/// s.insert(2);
/// s.insert(5000);
/// let f = sim::FrozenTaskSet::from(&s);
/// assert!(f.contains(5000) && !f.contains(64) && f.len() == 2);
/// assert_eq!(f.iter().collect::<Vec<_>>(), [2, 5000]);
/// assert!(f.equals(&s));
/// ```
#[derive(Clone, Debug, Default)]
pub struct FrozenTaskSet {
    /// Tasks 0..64, bit `t` (inline: most models have no other tasks).
    low: u64,
    /// The non-empty words from task 64 on: (word index, bits), where word
    /// `i` holds tasks `64 * i..64 * (i + 1)`; ascending.
    high: Box<[(u32, u64)]>,
    len: u32,
}

impl From<&TaskSet> for FrozenTaskSet {
    fn from(s: &TaskSet) -> FrozenTaskSet {
        let high = s
            .high
            .iter()
            .enumerate()
            .skip(s.first as usize)
            .filter(|(_, &w)| w != 0)
            .map(|(i, &w)| (i as u32 + 1, w))
            .collect();
        FrozenTaskSet { low: s.low, high, len: s.len }
    }
}

impl FrozenTaskSet {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn word(&self, i: u32) -> u64 {
        if i == 0 {
            return self.low;
        }
        self.high.binary_search_by_key(&i, |&(j, _)| j).map_or(0, |k| self.high[k].1)
    }

    pub fn contains(&self, t: TaskId) -> bool {
        self.word(t / 64) & (1u64 << (t % 64)) != 0
    }

    /// True if `s` has the same members.
    pub fn equals(&self, s: &TaskSet) -> bool {
        // As many members, and each of ours is one of `s`'s.
        self.len == s.len && self.low == s.low && self.high.iter().all(|&(i, w)| s.high.get(i as usize - 1) == Some(&w))
    }

    /// Members in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = TaskId> + '_ {
        std::iter::once((0, self.low)).chain(self.high.iter().copied()).flat_map(|(i, w)| {
            let mut x = w;
            std::iter::from_fn(move || {
                if x == 0 {
                    None
                } else {
                    let b = x.trailing_zeros();
                    x &= x - 1;
                    Some(i * 64 + b)
                }
            })
        })
    }
}

/// The position of the `k`-th set bit of `w` (`k < w.count_ones()`).
#[inline]
fn nth_bit(mut w: u64, k: usize) -> TaskId {
    for _ in 0..k {
        w &= w - 1;
    }
    w.trailing_zeros()
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

    #[test]
    fn a_frozen_set_has_the_members_of_the_set_it_was_made_from() {
        let mut s = TaskSet::new();
        for t in [1, 63, 64, 200, 5000, 5001, 9000] {
            s.insert(t);
        }
        s.remove(200);
        let f = FrozenTaskSet::from(&s);
        assert_eq!(f.iter().collect::<Vec<_>>(), s.iter().collect::<Vec<_>>());
        assert_eq!(f.len(), 6);
        for t in 0..10_000 {
            assert_eq!(f.contains(t), s.contains(t), "{t}");
        }
        // Only the words with members are kept: 64..128, 4992..5056, 8960..9024.
        assert_eq!(f.high.len(), 3);
        assert!(f.equals(&s));
        let mut other = s.clone();
        other.remove(5001);
        assert!(!f.equals(&other));
        other.insert(5002);
        assert!(!f.equals(&other), "as many members, not the same");
        other.remove(5002);
        other.insert(5001);
        other.insert(70_000);
        other.remove(70_000);
        assert!(f.equals(&other), "a set grown wider and emptied again");
        assert!(FrozenTaskSet::from(&TaskSet::new()).is_empty());
    }

    /// Every operation agrees with a `BTreeSet` through a long run of
    /// inserts and removes whose ids drift upwards, as a long model's tasks
    /// do (spawned for good, finishing in about their id order), so that
    /// the words below the live ones empty and fill again.
    #[test]
    fn a_set_whose_low_words_empty_agrees_with_a_btreeset() {
        let mut s = TaskSet::new();
        let mut model = std::collections::BTreeSet::new();
        let mut x: u64 = 1;
        for i in 0..40_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = (x >> 33) as u32;
            // Ids from a window that slides from 0 to about 10,000, now and
            // then one of the first 64 (a long-lived task woken again); the
            // id the window leaves behind finishes.
            let t = if r % 50 == 0 { r % 64 } else { i / 4 + r % 256 };
            if i % 4 == 0 && i >= 4 {
                let gone = i / 4 - 1;
                assert_eq!(s.remove(gone), model.remove(&gone), "finish {gone} at {i}");
            }
            if r % 3 == 0 {
                assert_eq!(s.remove(t), model.remove(&t), "remove {t} at {i}");
            } else {
                assert_eq!(s.insert(t), model.insert(t), "insert {t} at {i}");
            }
            assert_eq!(s.len(), model.len());
            if i % 97 == 0 {
                assert_eq!(s.iter().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>(), "at {i}");
                for (k, &t) in model.iter().enumerate() {
                    assert_eq!(s.nth(k), t, "nth {k} at {i}");
                    assert_eq!(s.rank(t), Some(k), "rank {t} at {i}");
                }
                let f = FrozenTaskSet::from(&s);
                assert_eq!(f.iter().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>(), "frozen at {i}");
                assert!(f.equals(&s));
                let mut c = TaskSet::new();
                c.clone_from(&s);
                assert!(c == s && c.iter().eq(s.iter()));
            }
        }
        assert!(s.first > 100, "the walk starts past the emptied words: {}", s.first);
        s.clear();
        assert!(s.is_empty() && s.iter().next().is_none());
        assert_eq!(s.first as usize, s.high.len(), "a cleared set's walk starts past its words");
        s.insert(64);
        assert_eq!((s.nth(0), s.rank(64)), (64, Some(0)));
    }
}
