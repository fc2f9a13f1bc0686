//! Numbered names (`caller-3`, `stream#5.recv`) made once per thread.
//!
//! A model names a resource or a task after a number it has at run time (a
//! stream id, a caller's index), and a hunt makes the same few names in every
//! one of its runs: formatted each time, with the allocation and the free
//! that go with them, they were 7% of a ttrpc run's instructions. [`numbered!`] keeps
//! each call site's names in a table by number, made on first use and kept
//! for the life of the thread, so a name after the first costs a look-up.
//!
//! The names are the formatted text, whatever thread or run made them first:
//! nothing about a run depends on the table.
//!
//! [`numbered!`]: crate::numbered

use std::borrow::Cow;
use std::cell::RefCell;
use std::thread::LocalKey;

/// The names of one call site, by number.
pub type Table = RefCell<Vec<Option<&'static str>>>;

/// Numbers at or above this are formatted every time (a table this long is
/// far beyond any model's ids; past it, memory kept would grow with them).
const KEPT: u64 = 4096;

/// The name for `n` from `table`, made with `make` the first time. Used by
/// [`numbered!`](crate::numbered), which gives every call site its own table.
pub fn numbered(table: &'static LocalKey<Table>, n: u64, make: impl FnOnce(u64) -> String) -> Cow<'static, str> {
    if n >= KEPT {
        return Cow::Owned(make(n));
    }
    table.with(|t| {
        let mut t = t.borrow_mut();
        let i = n as usize;
        if t.len() <= i {
            t.resize(i + 1, None);
        }
        // Kept for the thread's life on purpose: at most `KEPT` per site.
        let name = *t[i].get_or_insert_with(|| Box::leak(make(n).into_boxed_str()));
        Cow::Borrowed(name)
    })
}

/// `numbered!("stream#{}.recv", id)`: the name `format!` would make, as a
/// `Cow<'static, str>` borrowed from a per-thread table of this call site
/// (see [the module](crate::names)). The format string has one `{}`, for the
/// number (any unsigned integer).
///
/// ```
/// let names: Vec<_> = (0..2).map(|_| sim::numbered!("caller-{}", 3u32)).collect();
/// assert_eq!(names[0], "caller-3");
/// assert!(std::ptr::eq(&*names[0], &*names[1])); // made once, at this site
/// ```
#[macro_export]
macro_rules! numbered {
    ($fmt:literal, $n:expr) => {{
        ::std::thread_local! {
            static NAMES: $crate::names::Table = const { ::std::cell::RefCell::new(::std::vec::Vec::new()) };
        }
        $crate::names::numbered(&NAMES, ($n) as u64, |n| ::std::format!($fmt, n))
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
}
