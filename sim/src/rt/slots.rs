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
    /// Adds an entry at index `len()` from `args`: a kept one, passed to
    /// `reset`, or a new one from `make`.
    #[inline]
    pub fn add<A>(&mut self, args: A, reset: impl FnOnce(&mut T, A), make: impl FnOnce(A) -> T) -> usize {
        let i = self.live;
        match self.all.get_mut(i) {
            Some(kept) => reset(kept, args),
            None => self.all.push(make(args)),
        }
        self.live += 1;
        i
    }

    /// Ends the run: every live entry is kept for reuse.
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
        let reset = |v: &mut Vec<u32>, x: u32| {
            v.clear();
            v.push(x)
        };
        let mut s: Slots<Vec<u32>> = Slots::default();
        s.add(1, reset, |x| vec![x]);
        s.add(2, reset, |x| vec![x, x]);
        assert_eq!(&*s, &[vec![1], vec![2, 2]]);
        let kept = s[1].as_ptr();
        s.clear();
        assert!(s.is_empty());
        s.add(7, reset, |_| unreachable!());
        s.add(8, reset, |_| unreachable!());
        s.add(9, reset, |x| vec![x]);
        assert_eq!(&*s, &[vec![7], vec![8], vec![9]]);
        assert_eq!(s[1].as_ptr(), kept, "the second entry's vector was reused");
    }
}
