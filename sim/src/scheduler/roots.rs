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

/// Cut branches, in the order they were cut.
#[derive(Debug, Default)]
pub(super) struct Roots {
    paths: Vec<PathRec>,
    /// The choices of every stored path past what it shares with the one before.
    choices: Vec<u32>,
    /// Every cut: (depth, choice), the root being the first `depth`
    /// choices of its path and then `choice`.
    cuts: Vec<(u32, u32)>,
    /// The last path stored, whole, to code the next one against.
    last: Vec<u32>,
}

/// One stored path: how many choices it shares with the path before, and
/// where its own choices and its cuts end in `choices` and `cuts`.
#[derive(Debug)]
struct PathRec {
    shared: u32,
    choices_end: u32,
    cuts_end: u32,
}

impl Roots {
    /// Adds the `cuts` (depth, choice) one execution made along `path`, its
    /// choices, in the order it made them. Each depth is at most `path`'s length.
    pub fn add(&mut self, path: &[u32], cuts: &[(u32, u32)]) {
        let Some(deepest) = cuts.iter().map(|&(d, _)| d as usize).max() else { return };
        let path = &path[..deepest];
        let shared = self.last.iter().zip(path).take_while(|(a, b)| a == b).count();
        self.choices.extend_from_slice(&path[shared..]);
        self.cuts.extend_from_slice(cuts);
        let index = |n: usize| u32::try_from(n).expect("fewer than 2^32 cuts and choices");
        self.paths.push(PathRec {
            shared: index(shared),
            choices_end: index(self.choices.len()),
            cuts_end: index(self.cuts.len()),
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
            self.add(&path, &other.cuts[k0..p.cuts_end as usize]);
            (c0, k0) = (p.choices_end as usize, p.cuts_end as usize);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.cuts.is_empty()
    }

    /// The roots, in the order cut, each as its whole path of choices.
    pub fn iter(&self) -> impl Iterator<Item = Vec<u32>> + '_ {
        let mut path: Vec<u32> = Vec::new();
        let (mut c0, mut k0) = (0, 0);
        self.paths.iter().flat_map(move |p| {
            path.truncate(p.shared as usize);
            path.extend_from_slice(&self.choices[c0..p.choices_end as usize]);
            let cuts = &self.cuts[k0..p.cuts_end as usize];
            (c0, k0) = (p.choices_end as usize, p.cuts_end as usize);
            let roots: Vec<Vec<u32>> = cuts
                .iter()
                .map(|&(d, choice)| {
                    let mut root = path[..d as usize].to_vec();
                    root.push(choice);
                    root
                })
                .collect();
            roots
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_back_every_root_in_order_from_the_shared_paths() {
        let mut want: Vec<Vec<u32>> = Vec::new();
        let mut roots = Roots::default();
        // Three executions of one search, then one that shares nothing,
        // and one that cut nothing.
        type Run<'a> = (&'a [u32], &'a [(u32, u32)]);
        let runs: [Run; 5] = [
            (&[0, 1, 1, 2, 0], &[(1, 2), (3, 0), (3, 1)]),
            (&[0, 1, 1, 3, 3], &[(4, 0)]),
            (&[0, 2, 0], &[(0, 1), (2, 1)]),
            (&[5, 5], &[(2, 0)]),
            (&[9], &[]),
        ];
        for (path, cuts) in runs {
            roots.add(path, cuts);
            for &(d, c) in cuts {
                let mut r = path[..d as usize].to_vec();
                r.push(c);
                want.push(r);
            }
        }
        assert_eq!(roots.iter().collect::<Vec<_>>(), want);
        // Up to the deepest cut, what differs from the path before: 3 + 1 + 1 + 2 choices.
        assert_eq!(roots.choices.len(), 7);
        // Appended to another set, after its own roots.
        let mut both = Roots::default();
        both.add(&[0, 1, 7], &[(2, 3)]);
        both.append(roots);
        want.insert(0, vec![0, 1, 3]);
        assert_eq!(both.iter().collect::<Vec<_>>(), want);
        assert!(Roots::default().is_empty() && !both.is_empty());
    }
}
