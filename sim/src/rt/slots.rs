//! A table whose entries outlive the run that made them.
//!
//! Tasks and resources are a few hundred bytes each, with vectors inside
//! (frames, held locks, waiters). A hunt makes and drops them millions of
//! times; pushing a fresh struct each time copies it in and frees its
//! vectors on the way out. Here an entry of a finished run is reset in
//! place by the next run's spawn or `new`, vectors and all, so neither
//! happens.
//!
//! The live entries read as a slice (`len`, indexing, `iter`), so the rest
//! of the runtime uses the table as it would a `Vec`.

use std::ops::{Deref, DerefMut};

pub(crate) struct Slots<T> {
    all: Vec<T>,
    /// Entries `..live` belong to the current run; the rest wait for reuse.
    live: usize,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots { all: Vec::new(), live: 0 }
    }
}

impl<T> Slots<T> {
    /// The entry at index `len()` that an earlier run left, now live, for
    /// the caller to reset in place; `None` when there is none (then
    /// [`Slots::push`] a new one).
    #[inline(always)]
    pub fn reuse(&mut self) -> Option<&mut T> {
        let kept = self.all.get_mut(self.live)?;
        self.live += 1;
        Some(kept)
    }

    /// Adds a new entry at index `len()`, when [`Slots::reuse`] found none
    /// (rare once a thread has run a model once).
    #[cold]
    #[inline(never)]
    pub fn push(&mut self, x: T) {
        debug_assert_eq!(self.live, self.all.len(), "push only when nothing is left to reuse");
        self.all.push(x);
        self.live += 1;
    }

    pub fn clear(&mut self) {
        self.live = 0;
    }
}

impl<T> Deref for Slots<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `live <= all.len()` always (`add` grows both together).
        unsafe { self.all.get_unchecked(..self.live) }
    }
}

impl<T> DerefMut for Slots<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`.
        unsafe { self.all.get_unchecked_mut(..self.live) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_reset_in_place_after_clear() {
        fn add(s: &mut Slots<Vec<u32>>, x: u32, fresh: bool) {
            match s.reuse() {
                Some(v) => {
                    assert!(!fresh, "{x}: an entry was left to reuse");
                    v.clear();
                    v.push(x)
                }
                None => s.push(vec![x; if x == 2 { 2 } else { 1 }]),
            }
        }
        let mut s: Slots<Vec<u32>> = Slots::default();
        add(&mut s, 1, true);
        add(&mut s, 2, true);
        assert_eq!(&*s, &[vec![1], vec![2, 2]]);
        let kept = s[1].as_ptr();
        s.clear();
        assert!(s.is_empty());
        add(&mut s, 7, false);
        add(&mut s, 8, false);
        add(&mut s, 9, true);
        assert_eq!(&*s, &[vec![7], vec![8], vec![9]]);
        assert_eq!(s[1].as_ptr(), kept, "the second entry's vector was reused");
    }
}
