//! Vector clocks for the happens-before relation of partial-order reduction.
//!
//! An exploration keeps one clock per step of the current execution, each as
//! wide as the tasks spawned so far. Stored whole, that is steps x tasks
//! words: one execution of ttrpc v1.2.4 with 256 callers and 20 calls each
//! (a run of seed 0 has 5,380 tasks and 127,572 steps) took 1.67 GB, and
//! 272 MB with these. A clock is a row of shared chunks of [`CHUNK`]
//! entries: a step's clock is its task's previous clock with one entry
//! raised and a few chunks joined in, so it shares every other chunk with
//! the clocks before it, and a join skips the chunks two
//! clocks share. The clocks themselves live in a [`ClockPool`] that hands
//! a clock no task or resource names any more to the next step.

use std::rc::Rc;

/// Entries per chunk: a chunk is 256 bytes, a clock's row of pointers one
/// word per 64 tasks.
const CHUNK: usize = 64;

type Chunk = [u32; CHUNK];

/// Entries of the first chunk kept in place while no task past them has a
/// say: a model of up to this many tasks copies and joins clocks without
/// allocating.
const SMALL: usize = 16;

/// The first chunk of a clock.
#[derive(Clone, Debug, Default)]
enum First {
    /// Every entry 0.
    #[default]
    Zero,
    /// Entries 0..SMALL in place, the rest of the chunk 0.
    Small([u32; SMALL]),
    /// The whole chunk, shared.
    Shared(Rc<Chunk>),
}

/// A vector clock: entry `t` counts the steps of task `t` that happen
/// before (or at) the point the clock describes. Entries past the end are 0.
#[derive(Debug, Default)]
pub(super) struct VClock {
    /// Entries 0..CHUNK, the tasks of most models: held apart, and the
    /// first [`SMALL`] of them in place, so that copying and joining the
    /// clocks of a small model allocates nothing.
    first: First,
    /// Entries from CHUNK on, a chunk each.
    rest: Vec<Rc<Chunk>>,
}

impl Clone for VClock {
    fn clone(&self) -> VClock {
        VClock { first: self.first.clone(), rest: self.rest.clone() }
    }

    /// Keeps this clock's row of chunk pointers: a pooled clock written over
    /// by the next step's allocates nothing.
    fn clone_from(&mut self, source: &VClock) {
        self.first.clone_from(&source.first);
        self.rest.clone_from(&source.rest);
    }
}

impl VClock {
    /// Every entry 0 again, keeping the row's room (its chunks are let go).
    fn reset(&mut self) {
        self.first = First::Zero;
        self.rest.clear();
    }

    /// Entry `t`.
    #[inline]
    pub fn get(&self, t: usize) -> u32 {
        match (&self.first, t < CHUNK) {
            (First::Zero, true) => 0,
            (First::Small(a), true) => a.get(t).copied().unwrap_or(0),
            (First::Shared(c), true) => c[t],
            (_, false) => self.rest.get(t / CHUNK - 1).map_or(0, |c| c[t % CHUNK]),
        }
    }

    /// The first chunk as a shared chunk (for an entry past `SMALL`, or a
    /// join with a shared one).
    fn first_shared(&mut self) -> &mut Rc<Chunk> {
        let whole = match &self.first {
            First::Shared(_) => None,
            First::Zero => Some(zero_chunk()),
            First::Small(a) => {
                let mut c = [0; CHUNK];
                c[..SMALL].copy_from_slice(a);
                Some(Rc::new(c))
            }
        };
        if let Some(c) = whole {
            self.first = First::Shared(c);
        }
        let First::Shared(c) = &mut self.first else { unreachable!("made shared above") };
        c
    }

    /// Sets entry `t` to `v`, copying its chunk first if another clock shares it.
    pub fn set(&mut self, t: usize, v: u32) {
        let i = t / CHUNK;
        let chunk = if i == 0 {
            match &mut self.first {
                First::Zero if t < SMALL => {
                    let mut a = [0; SMALL];
                    a[t] = v;
                    self.first = First::Small(a);
                    return;
                }
                First::Small(a) if t < SMALL => {
                    a[t] = v;
                    return;
                }
                _ => self.first_shared(),
            }
        } else {
            if self.rest.len() < i {
                self.rest.resize_with(i, zero_chunk);
            }
            &mut self.rest[i - 1]
        };
        Rc::make_mut(chunk)[t % CHUNK] = v;
    }

    /// Raises every entry to at least `other`'s. A chunk the two share, or
    /// one of `other`'s that is no higher anywhere, costs no copy; one that
    /// is no lower anywhere is shared from `other`.
    pub fn join(&mut self, other: &VClock) {
        match (&mut self.first, &other.first) {
            (_, First::Zero) => {}
            // Where we have no chunk every entry is 0: theirs is the join.
            (mine @ First::Zero, theirs) => *mine = theirs.clone(),
            (First::Small(a), First::Small(b)) => {
                for (x, y) in a.iter_mut().zip(b) {
                    *x = (*x).max(*y);
                }
            }
            (First::Shared(mine), First::Small(b)) => {
                if mine[..SMALL].iter().zip(b).any(|(x, y)| x < y) {
                    for (x, y) in Rc::make_mut(mine).iter_mut().zip(b) {
                        *x = (*x).max(*y);
                    }
                }
            }
            (_, First::Shared(theirs)) => join_chunk(self.first_shared(), theirs),
        }
        for (i, theirs) in other.rest.iter().enumerate() {
            match self.rest.get_mut(i) {
                None => self.rest.push(theirs.clone()),
                Some(mine) => join_chunk(mine, theirs),
            }
        }
    }

    /// Where each chunk lives: for tests of the sharing (a chunk kept in
    /// place or all zero is a null pointer).
    #[cfg(test)]
    fn chunk_ptrs(&self) -> Vec<*const Chunk> {
        let first = match &self.first {
            First::Shared(c) => Rc::as_ptr(c),
            _ => std::ptr::null(),
        };
        std::iter::once(first).chain(self.rest.iter().map(Rc::as_ptr)).collect()
    }
}

/// Names a clock of a [`ClockPool`].
pub(super) type ClockId = u32;

/// The clocks of one execution, by id, each with a count of its holders
/// (its task, the resources it touched). A clock no longer held goes back
/// to the pool and the next step writes over it: a step allocates no clock
/// (one `Rc<VClock>` per step was a quarter of the allocator's work in an
/// exploration), and what is held is what `Rc`s held, the clocks some task
/// or resource still names.
#[derive(Debug, Default)]
pub(super) struct ClockPool {
    clocks: Vec<VClock>,
    holders: Vec<u32>,
    free: Vec<ClockId>,
}

impl ClockPool {
    /// Clock `c`.
    #[inline]
    pub fn get(&self, c: ClockId) -> &VClock {
        &self.clocks[c as usize]
    }

    /// A new clock, a copy of `from`'s (all zero for `None`), held once (by
    /// the caller), who changes it with [`ClockPool::join_into`] and
    /// [`ClockPool::set`] before anyone else holds it.
    pub fn copy_of(&mut self, from: Option<ClockId>) -> ClockId {
        let c = match self.free.pop() {
            Some(c) => c,
            None => {
                self.clocks.push(VClock::default());
                self.holders.push(0);
                (self.clocks.len() - 1) as ClockId
            }
        };
        debug_assert_eq!(self.holders[c as usize], 0);
        self.holders[c as usize] = 1;
        match from {
            Some(f) => {
                let (clock, from) = self.pair(c, f);
                clock.clone_from(from);
            }
            None => self.clocks[c as usize].reset(),
        }
        c
    }

    /// Clock `c` (being made) and clock `other` (another).
    #[inline]
    fn pair(&mut self, c: ClockId, other: ClockId) -> (&mut VClock, &VClock) {
        debug_assert_eq!(self.holders[c as usize], 1, "a clock is changed only before it is shared");
        let (c, o) = (c as usize, other as usize);
        if c < o {
            let (low, high) = self.clocks.split_at_mut(o);
            (&mut low[c], &high[0])
        } else {
            let (low, high) = self.clocks.split_at_mut(c);
            (&mut high[0], &low[o])
        }
    }

    /// Raises clock `c` (being made) to at least `other`'s entries.
    #[inline]
    pub fn join_into(&mut self, c: ClockId, other: ClockId) {
        let (clock, other) = self.pair(c, other);
        clock.join(other);
    }

    /// Sets entry `t` of clock `c` (being made).
    #[inline]
    pub fn set(&mut self, c: ClockId, t: usize, v: u32) {
        debug_assert_eq!(self.holders[c as usize], 1, "a clock is changed only before it is shared");
        self.clocks[c as usize].set(t, v);
    }

    /// One holder more for `c`.
    #[inline]
    pub fn hold(&mut self, c: ClockId) {
        self.holders[c as usize] += 1;
    }

    /// One holder less for `c`; with none left, it goes back to the pool.
    #[inline]
    pub fn release(&mut self, c: ClockId) {
        let h = &mut self.holders[c as usize];
        *h -= 1;
        if *h == 0 {
            self.free.push(c);
        }
    }

    /// Every clock back to the pool, its chunks let go (an execution's
    /// chunks are not kept into the next).
    pub fn clear(&mut self) {
        self.free.clear();
        for (c, clock) in self.clocks.iter_mut().enumerate().rev() {
            clock.reset();
            self.free.push(c as ClockId);
        }
        self.holders.iter_mut().for_each(|h| *h = 0);
    }

    /// Clocks made so far (held or free): what the pool's memory grows with.
    #[cfg(test)]
    pub fn slots(&self) -> usize {
        self.clocks.len()
    }
}

/// [`VClock::join`] of one chunk.
fn join_chunk(mine: &mut Rc<Chunk>, theirs: &Rc<Chunk>) {
    if Rc::ptr_eq(mine, theirs) {
        return;
    }
    let (mut lower, mut higher) = (false, false);
    for (a, b) in mine.iter().zip(theirs.iter()) {
        lower |= a < b;
        higher |= a > b;
    }
    match (lower, higher) {
        (false, _) => {}
        (true, false) => *mine = theirs.clone(),
        (true, true) => {
            let m = Rc::make_mut(mine);
            for (a, b) in m.iter_mut().zip(theirs.iter()) {
                *a = (*a).max(*b);
            }
        }
    }
}

fn zero_chunk() -> Rc<Chunk> {
    // One all-zero chunk per thread, shared by every clock that grows past
    // a task it has not heard from: growing a clock copies nothing.
    thread_local! {
        static ZERO: Rc<Chunk> = Rc::new([0; CHUNK]);
    }
    ZERO.with(Rc::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain form: a whole vector, for comparison.
    fn join_plain(a: &mut Vec<u32>, b: &[u32]) {
        if a.len() < b.len() {
            a.resize(b.len(), 0);
        }
        for (x, y) in a.iter_mut().zip(b) {
            *x = (*x).max(*y);
        }
    }

    #[test]
    fn gets_sets_and_joins_as_a_whole_vector_does() {
        // A fixed pseudo-random walk of sets and joins over 300 entries
        // (chunks 0 to 4), checked entry by entry against plain vectors.
        let mut rng = crate::rng::SimRng::new(2);
        let mut next = |n: u64| u64::from(rng.below(n as u32));
        let mut clocks: Vec<VClock> = vec![VClock::default(); 6];
        let mut plain: Vec<Vec<u32>> = vec![Vec::new(); 6];
        for _ in 0..5000 {
            let (i, j) = (next(6) as usize, next(6) as usize);
            if next(50) == 0 {
                // Now and then a fresh clock, so that clocks of different
                // lengths keep meeting in joins.
                clocks[i] = VClock::default();
                plain[i].clear();
            } else if next(3) == 0 {
                let (t, v) = (next(300) as usize, next(1000) as u32);
                let v = v.max(clocks[i].get(t));
                clocks[i].set(t, v);
                if plain[i].len() <= t {
                    plain[i].resize(t + 1, 0);
                }
                plain[i][t] = v;
            } else if next(2) == 0 {
                let other = clocks[j].clone();
                clocks[i].join(&other);
                let other = plain[j].clone();
                join_plain(&mut plain[i], &other);
            } else {
                clocks[i] = clocks[j].clone();
                plain[i] = plain[j].clone();
            }
            for (c, p) in clocks.iter().zip(&plain) {
                for t in 0..320 {
                    assert_eq!(c.get(t), p.get(t).copied().unwrap_or(0), "entry {t}");
                }
            }
        }
    }

    #[test]
    fn a_copy_with_one_entry_raised_shares_every_other_chunk() {
        let mut a = VClock::default();
        for t in 0..(4 * CHUNK) {
            a.set(t, 1);
        }
        let mut b = a.clone();
        b.set(CHUNK + 5, 2);
        let (pa, pb) = (a.chunk_ptrs(), b.chunk_ptrs());
        let shared: Vec<bool> = pa.iter().zip(&pb).map(|(x, y)| x == y).collect();
        assert_eq!(shared, [true, false, true, true]);
        // Joining a clock into one that knows more copies nothing.
        b.join(&a);
        assert_eq!(b.chunk_ptrs(), pb);
        // Joining it into one that knows less takes its chunk.
        a.join(&b);
        assert_eq!(a.chunk_ptrs(), pb);
    }

    #[test]
    fn joining_a_shorter_clock_keeps_the_tail_and_copies_a_shared_chunk() {
        let (x, y) = (SMALL + 3, SMALL + 4);
        let mut a = VClock::default();
        a.set(x, 5);
        a.set(3 * CHUNK + 1, 7);
        let mut b = VClock::default();
        b.set(y, 9);
        let c = a.clone();
        a.join(&b);
        assert_eq!((a.get(x), a.get(y), a.get(3 * CHUNK + 1)), (5, 9, 7));
        // `c` shared chunk 0 with `a`: the join wrote to a copy.
        assert_eq!((c.get(x), c.get(y)), (5, 0));
        assert_eq!(a.chunk_ptrs()[1..], c.chunk_ptrs()[1..]);
        assert_ne!(a.chunk_ptrs()[0], c.chunk_ptrs()[0]);
    }

    #[test]
    fn the_clocks_of_a_small_model_stay_in_place() {
        let mut a = VClock::default();
        a.set(2, 4);
        let mut b = a.clone();
        b.set(SMALL - 1, 3);
        a.join(&b);
        assert_eq!((a.get(2), a.get(SMALL - 1), a.get(SMALL), b.get(2)), (4, 3, 0, 4));
        assert!(a.chunk_ptrs().iter().chain(&b.chunk_ptrs()).all(|p| p.is_null()), "no chunk allocated");
        // A task past them: the chunk is made, with the entries kept.
        a.set(SMALL, 1);
        assert!(!a.chunk_ptrs()[0].is_null());
        assert_eq!((a.get(2), a.get(SMALL - 1), a.get(SMALL)), (4, 3, 1));
        // Joined either way with a small clock, a shared chunk gives the same entries.
        let mut small = VClock::default();
        small.set(5, 8);
        let mut shared = a.clone();
        shared.join(&small);
        small.join(&a);
        for t in 0..CHUNK {
            assert_eq!(shared.get(t), small.get(t), "entry {t}");
        }
        assert_eq!((shared.get(5), shared.get(2), shared.get(SMALL)), (8, 4, 1));
    }

    #[test]
    fn a_pool_reuses_a_clock_only_once_nobody_holds_it() {
        let mut pool = ClockPool::default();
        let a = pool.copy_of(None);
        pool.set(a, 0, 1);
        pool.hold(a); // a second holder
        let b = pool.copy_of(Some(a));
        pool.set(b, 1, 2);
        assert_eq!((pool.get(a).get(1), pool.get(b).get(0), pool.get(b).get(1)), (0, 1, 2));
        pool.release(a);
        // Still held once: a new clock takes another slot.
        let c = pool.copy_of(None);
        assert!(c != a && c != b);
        pool.join_into(c, b);
        assert_eq!((pool.get(c).get(0), pool.get(c).get(1)), (1, 2));
        pool.release(a);
        // Free now: the next clock is written over it, from zero.
        let d = pool.copy_of(None);
        assert_eq!(d, a);
        assert_eq!(pool.get(d).get(0), 0);
        assert_eq!(pool.slots(), 3);
        // Clearing frees every slot and lets every chunk go.
        pool.set(d, CHUNK + 1, 9);
        pool.clear();
        let e = pool.copy_of(None);
        assert_eq!((pool.slots(), pool.get(e).get(CHUNK + 1)), (3, 0));
    }
}
