//! The subtrees one pass of a preemption-bounded exploration leaves to the next.
//!
//! Pass `b` cuts every branch that would make a schedule's `b + 1`th
//! preemption, and pass `b + 1` explores the subtree below each cut (see
//! `dfs::explore`). A cut is the path of choices to its node, then one more
//! choice. Stored as a list of whole paths, a long model's cuts took space
//! of the order of its depth squared per execution: 170 KB per Flink
//! execution, 3.4 GB for 20,000 of them. Here an execution that cut
//! anything stores its path once, as what differs from the path stored
//! before it (successive executions of a depth-first search share most of
//! theirs), and each cut as its depth and choice.

use std::ops::Range;

use crate::rt::{FrozenTaskSet, TaskSet};

/// A node that cuts more tasks than this keeps them as one set.
const FEW: usize = 4;

/// Marks an entry of [`Cuts`] that names a set, not a task.
const MANY: u32 = 1 << 31;

/// Cut branches as (depth, task), in the order cut. A node that cuts many
/// (255 of 256 enabled ttrpc callers) keeps them as one set apart, and one
/// entry `(depth, MANY | i)` names `sets[i]`: an entry stays 8 bytes.
#[derive(Debug, Default)]
pub(super) struct Cuts {
    entries: Vec<(u32, u32)>,
    sets: Vec<FrozenTaskSet>,
}

impl Cuts {
    /// Adds the cuts of the node at `depth`: every task in `tasks`, in id order.
    pub fn push(&mut self, depth: u32, tasks: &TaskSet) {
        if tasks.len() <= FEW {
            // Task ids are spawn indices: far below the MANY bit.
            debug_assert!(tasks.iter().all(|u| u & MANY == 0));
            self.entries.extend(tasks.iter().map(|u| (depth, u)));
        } else {
            self.entries.push((depth, MANY | set_index(self.sets.len())));
            self.sets.push(FrozenTaskSet::from(tasks));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.sets.clear();
    }

    /// The cuts of `entries[range]`, one (depth, task) each, in order.
    fn each(&self, range: Range<usize>) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.entries[range].iter().flat_map(move |&(d, what)| {
            let (one, many) = match what & MANY {
                0 => (Some((d, what)), None),
                _ => (None, Some(self.sets[(what & !MANY) as usize].iter().map(move |u| (d, u)))),
            };
            one.into_iter().chain(many.into_iter().flatten())
        })
    }

    /// Copies `other.entries[range]` (and the sets they name) after these.
    fn extend_from(&mut self, other: &Cuts, range: Range<usize>) {
        for &(d, what) in &other.entries[range] {
            if what & MANY == 0 {
                self.entries.push((d, what));
            } else {
                self.entries.push((d, MANY | set_index(self.sets.len())));
                self.sets.push(other.sets[(what & !MANY) as usize].clone());
            }
        }
    }
}

fn index(n: usize) -> u32 {
    u32::try_from(n).expect("fewer than 2^32 cuts and choices")
}

/// The index of a set in `Cuts::sets`, below the MANY bit it is stored with.
fn set_index(n: usize) -> u32 {
    let i = index(n);
    assert!(i < MANY, "fewer than 2^31 cut sets");
    i
}

/// Cut branches, in the order they were cut, as the roots of the next pass.
#[derive(Debug, Default)]
pub(super) struct Roots {
    paths: Vec<PathRec>,
    /// The choices of every stored path past what it shares with the one before.
    choices: Vec<u32>,
    /// Every cut: the root is the first `depth` choices of its path, then the task.
    cuts: Cuts,
    /// The last path stored, whole, to code the next one against.
    last: Vec<u32>,
}

/// One stored path: how many choices it shares with the path before, and
/// where its own choices and its cuts end in `choices` and `cuts.entries`.
#[derive(Debug)]
struct PathRec {
    shared: u32,
    choices_end: u32,
    cuts_end: u32,
}

impl Roots {
    /// Adds the `cuts` one execution made along `path`, its choices, in the
    /// order it made them. Each depth is at most `path`'s length.
    pub fn add(&mut self, path: &[u32], cuts: &Cuts) {
        self.add_from(path, cuts, 0..cuts.entries.len());
    }

    fn add_from(&mut self, path: &[u32], cuts: &Cuts, range: Range<usize>) {
        let Some(deepest) = cuts.entries[range.clone()].iter().map(|&(d, _)| d as usize).max() else { return };
        let path = &path[..deepest];
        let shared = self.last.iter().zip(path).take_while(|(a, b)| a == b).count();
        self.choices.extend_from_slice(&path[shared..]);
        self.cuts.extend_from(cuts, range);
        self.paths.push(PathRec {
            shared: index(shared),
            choices_end: index(self.choices.len()),
            cuts_end: index(self.cuts.entries.len()),
        });
        self.last.truncate(shared);
        self.last.extend_from_slice(&path[shared..]);
    }

    /// Adds every cut of `other`, after this one's.
    pub fn append(&mut self, other: Roots) {
        let mut path = Vec::new();
        let (mut c0, mut k0) = (0, 0);
        for p in &other.paths {
            path.truncate(p.shared as usize);
            path.extend_from_slice(&other.choices[c0..p.choices_end as usize]);
            self.add_from(&path, &other.cuts, k0..p.cuts_end as usize);
            (c0, k0) = (p.choices_end as usize, p.cuts_end as usize);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.cuts.is_empty()
    }

    /// The roots, in the order cut, each as its whole path of choices, one
    /// at a time: a long path with many cuts is not made into all its roots
    /// at once (abba --fixed --rounds 1000 --preemptions 1 took 51 MB so for
    /// 50 executions, and takes 6 MB).
    pub fn iter(&self) -> impl Iterator<Item = Vec<u32>> + '_ {
        let mut path: Vec<u32> = Vec::new();
        let (mut c0, mut k0) = (0, 0);
        self.paths.iter().flat_map(move |p| {
            path.truncate(p.shared as usize);
            path.extend_from_slice(&self.choices[c0..p.choices_end as usize]);
            let range = k0..p.cuts_end as usize;
            (c0, k0) = (p.choices_end as usize, p.cuts_end as usize);
            // This path, for its cuts; the running `path` goes on to the next.
            let here = path.clone();
            self.cuts.each(range).map(move |(d, choice)| {
                let mut root = here[..d as usize].to_vec();
                root.push(choice);
                root
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuts(of: &[(u32, &[u32])]) -> Cuts {
        let mut cuts = Cuts::default();
        for &(d, tasks) in of {
            let mut s = TaskSet::new();
            for &t in tasks {
                s.insert(t);
            }
            cuts.push(d, &s);
        }
        cuts
    }

    #[test]
    fn gives_back_every_root_in_order_from_the_shared_paths() {
        let mut want: Vec<Vec<u32>> = Vec::new();
        let mut roots = Roots::default();
        // Three executions of one search, then one that shares nothing,
        // and one that cut nothing.
        // (depth, tasks cut there): node 3 of the first run cuts tasks 0 and 1, which
        // come back in id order; the third cuts more than FEW tasks (kept as a
        // set), some past 64.
        type Run<'a> = (&'a [u32], &'a [(u32, &'a [u32])]);
        let runs: [Run; 5] = [
            (&[0, 1, 1, 2, 0], &[(1, &[2]), (3, &[1, 0])]),
            (&[0, 1, 1, 3, 3], &[(4, &[0])]),
            (&[0, 2, 0], &[(0, &[1]), (2, &[1, 300, 2, 70, 3, 4])]),
            (&[5, 5], &[(2, &[0, 300])]),
            (&[9], &[]),
        ];
        for (path, of) in runs {
            roots.add(path, &cuts(of));
            for &(d, tasks) in of {
                let mut tasks = tasks.to_vec();
                tasks.sort();
                for c in tasks {
                    let mut r = path[..d as usize].to_vec();
                    r.push(c);
                    want.push(r);
                }
            }
        }
        assert_eq!(roots.iter().collect::<Vec<_>>(), want);
        // Up to the deepest cut, what differs from the path before: 3 + 1 + 1 + 2 choices.
        assert_eq!(roots.choices.len(), 7);
        // One set, for the node that cut six tasks.
        assert_eq!((roots.cuts.sets.len(), roots.cuts.entries.len()), (1, 8));
        // Appended to another set, after its own roots.
        let mut both = Roots::default();
        both.add(&[0, 1, 7], &cuts(&[(2, &[3])]));
        both.append(roots);
        want.insert(0, vec![0, 1, 3]);
        assert_eq!(both.iter().collect::<Vec<_>>(), want);
        assert!(Roots::default().is_empty() && !both.is_empty());
    }
}
