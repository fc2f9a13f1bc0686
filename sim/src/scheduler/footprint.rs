//! What one step touched, for partial-order reduction.

use crate::rt::TaskId;

/// What one step touched: the resources its operations used (locks,
/// channels, pipes, and a pseudo-resource per task for spawn/finish/join),
/// and whether it made a data choice. Two steps of different tasks are
/// independent unless one changed a resource the other changed or looked
/// at ([`Footprint::conflicts`]): two looks alone do not conflict.
///
/// ```
/// use sim::scheduler::Footprint;
/// let mut lock_a = Footprint::default();
/// lock_a.resources.insert(0);
/// let mut look_at_a = Footprint::default();
/// look_at_a.reads.insert(0);
/// assert!(lock_a.conflicts(&look_at_a));
/// assert!(!look_at_a.conflicts(&look_at_a.clone()));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Resources the step changed (took, released, sent on, ...).
    pub resources: ResSet,
    /// Resources the step only looked at and left as they were: an attempt
    /// that found the resource busy and blocked, a declared look
    /// (`sim::access(_, false)`, `observe`), a select's case looked at, a
    /// join that found its task finished, a task's first step. Two such
    /// looks do not conflict.
    pub reads: ResSet,
    pub data_choice: bool,
    /// The step set a timer or read the virtual clock. Every step moves the
    /// clock, so such a step depends on how many steps of any task came
    /// before it, which no footprint says: a reduced search that sees one
    /// is redone without reduction (see [`crate::scheduler::explore`]).
    pub timed: bool,
    /// The step began by taking what another task's step granted it (a
    /// value handed over, a lock passed on, a parked operation completed),
    /// or is the task's first (its spawn enabled it): that step cannot come
    /// after this one, so the two are ordered, not a race.
    pub granted: bool,
}

impl Footprint {
    /// The pseudo-resource of task `t`: its spawn, a grant to it and the
    /// step that takes the grant, and its finish change it; its first step
    /// and a join that finds it finished look at it (a join that blocks
    /// only waits, and touches nothing).
    pub fn task_resource(t: TaskId) -> u32 {
        u32::MAX - t
    }

    /// True if the two steps touch a common resource and one changes it.
    pub fn conflicts(&self, other: &Footprint) -> bool {
        self.resources.iter().any(|r| other.resources.contains(r) || other.reads.contains(r))
            || self.reads.iter().any(|r| other.resources.contains(r))
    }
}

/// Resource ids kept inline by a [`ResSet`]: a step touches one to three.
const INLINE: usize = 6;

/// A small set of resource ids in the order they were added. The first
/// six (`INLINE`) are kept in place, so that an exploration, which stores and
/// copies a footprint at every step, allocates nothing for one.
#[derive(Clone, Default)]
pub struct ResSet {
    inline: [u32; INLINE],
    len: u32,
    /// The ids past the first [`INLINE`].
    more: Vec<u32>,
}

impl ResSet {
    /// Adds `r` unless it is there already.
    #[inline]
    pub fn insert(&mut self, r: u32) {
        if self.contains(r) {
            return;
        }
        let n = self.len as usize;
        if n < INLINE {
            self.inline[n] = r;
        } else {
            self.more.push(r);
        }
        self.len += 1;
    }

    #[inline]
    pub fn contains(&self, r: u32) -> bool {
        self.iter().any(|x| x == r)
    }

    /// The ids, in the order they were added.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = u32> + Clone + '_ {
        self.inline[..(self.len as usize).min(INLINE)].iter().chain(&self.more).copied()
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
        self.more.clear();
    }
}

impl PartialEq for ResSet {
    fn eq(&self, other: &ResSet) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for ResSet {}

impl std::fmt::Debug for ResSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_keeps_the_order_of_adding_past_its_inline_room() {
        let mut s = ResSet::default();
        for r in [5, 3, 5, 9, 1, 2, 7, 4, 3, 8] {
            s.insert(r);
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), [5, 3, 9, 1, 2, 7, 4, 8]);
        assert_eq!(s.len(), 8);
        assert!(s.contains(8) && s.contains(5) && !s.contains(6));
        let copy = s.clone();
        s.clear();
        assert!(s.is_empty() && !s.contains(5));
        s.insert(6);
        assert_eq!(s.iter().collect::<Vec<_>>(), [6]);
        // Equal by content, whatever a cleared set left in its slots.
        let mut fresh = ResSet::default();
        fresh.insert(6);
        assert_eq!(s, fresh);
        assert_ne!(copy, fresh);
    }
}
