//! Numbered names (`caller-3`, `stream#5.recv`) made once per thread.
//!
//! A model names a resource or a task after a number it has at run time (a
//! stream id, a caller's index), and a hunt makes the same few names in every
//! one of its runs: formatted each time, with the allocation and the free
//! that go with them, they were 7% of a ttrpc run's instructions. [`numbered!`] keeps
//! each call site's names in a table by number, made on first use and kept
//! for the life of the process (one copy, whichever thread made it), and each
//! thread a cache of that table, so a name after the first costs a look-up
//! without a lock.
//!
//! The names are the formatted text, whatever thread or run made them first:
//! nothing about a run depends on the table.
//!
//! [`numbered!`]: crate::numbered

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::Mutex;
use std::thread::LocalKey;

/// The names of one call site, by number, for the whole process.
pub type Table = Mutex<Vec<Option<&'static str>>>;

/// One thread's copy of the part of a [`Table`] it has used.
pub type Cache = RefCell<Vec<Option<&'static str>>>;

/// Numbers at or above this are formatted every time (a table this long is
/// far beyond any model's ids; past it, memory kept would grow with them).
const KEPT: u64 = 4096;

/// The name for `n` from `table` (through this thread's `cache` of it),
/// made with `make` the first time in the process. Used by
/// [`numbered!`](crate::numbered), which gives every call site its own.
pub fn numbered(
    table: &'static Table,
    cache: &'static LocalKey<Cache>,
    n: u64,
    make: impl FnOnce(u64) -> String,
) -> Cow<'static, str> {
    if n >= KEPT {
        return Cow::Owned(make(n));
    }
    let i = n as usize;
    let grow = |v: &mut Vec<Option<&'static str>>| {
        if v.len() <= i {
            v.resize(i + 1, None);
        }
    };
    cache.with(|c| {
        let mut c = c.borrow_mut();
        grow(&mut c);
        let name = match c[i] {
            Some(name) => name,
            None => {
                let mut t = table.lock().unwrap_or_else(|e| e.into_inner());
                grow(&mut t);
                // Kept for the process's life on purpose: at most `KEPT` per site.
                let name = *t[i].get_or_insert_with(|| Box::leak(make(n).into_boxed_str()));
                c[i] = Some(name);
                name
            }
        };
        Cow::Borrowed(name)
    })
}

/// `numbered!("stream#{}.recv", id)`: the name `format!` would make, as a
/// `Cow<'static, str>` borrowed from a per-thread table of this call site
/// (see [the module](crate::names)). The format string has one `{}`, for the
/// number (any unsigned integer). Every thread gets the same copy.
///
/// ```
/// let names: Vec<_> = (0..2).map(|_| sim::numbered!("caller-{}", 3u32)).collect();
/// assert_eq!(names[0], "caller-3");
/// assert!(std::ptr::eq(&*names[0], &*names[1])); // made once, at this site
/// ```
#[macro_export]
macro_rules! numbered {
    ($fmt:literal, $n:expr) => {{
        static NAMES: $crate::names::Table = ::std::sync::Mutex::new(::std::vec::Vec::new());
        ::std::thread_local! {
            static CACHE: $crate::names::Cache = const { ::std::cell::RefCell::new(::std::vec::Vec::new()) };
        }
        $crate::names::numbered(&NAMES, &CACHE, ($n) as u64, |n| ::std::format!($fmt, n))
    }};
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_site_names_each_number_as_format_would() {
        let names: Vec<_> = [0u64, 7, 7, 4095, 4096, u64::MAX].iter().map(|&n| crate::numbered!("x{}y", n)).collect();
        let want = ["x0y", "x7y", "x7y", "x4095y", "x4096y", &format!("x{}y", u64::MAX)];
        assert_eq!(names, want);
        // Below the limit a name is kept; from it on, made each time.
        assert!(matches!(names[3], std::borrow::Cow::Borrowed(_)));
        assert!(matches!(names[4], std::borrow::Cow::Owned(_)));
        // Another site has its own table.
        assert_eq!(crate::numbered!("z{}", 7u64), "z7");
    }

    #[test]
    fn threads_share_one_copy_of_each_name() {
        fn name(n: u64) -> usize {
            crate::numbered!("shared-{}", n).as_ptr() as usize
        }
        let here = name(5);
        let there: Vec<usize> = (0..4).map(|_| std::thread::spawn(|| name(5)).join().unwrap()).collect();
        assert!(there.iter().all(|&p| p == here), "one leaked copy for the process");
    }
}
