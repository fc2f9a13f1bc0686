//! Writing files whole or not at all.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a temporary file beside `path`, then renames it over
/// `path`, so a reader never sees a partial file and a failure leaves none.
///
/// A symbolic link is followed: the file it points to is replaced, not the
/// link. A path that is not a regular file (`/dev/null`, `/dev/stdout`, a
/// FIFO) is written to in place, as a shell redirection would: there is no
/// file to leave half-written, and renaming over a device would replace it.
/// As with a redirection, a FIFO waits for a reader.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// [`write_atomic`] of what `write` writes, as it writes it (buffered): a
/// large file is never whole in memory. An error of `write` is returned
/// and, as any other, leaves no file.
///
/// ```
/// use std::io::Write;
/// let path = std::env::temp_dir().join(format!("deadsim-doc-with-{}", std::process::id()));
/// sim::fsutil::write_atomic_with(&path, |out| (0..3).try_for_each(|i| write!(out, "{i} "))).unwrap();
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "0 1 2 ");
/// let failed = sim::fsutil::write_atomic_with(&path, |out| {
///     out.write_all(b"half")?;
///     Err(std::io::Error::other("the writer gave up"))
/// });
/// assert!(failed.is_err());
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "0 1 2 ", "the file there is kept");
/// std::fs::remove_file(&path).unwrap();
/// ```
///
/// # Errors
/// Those of the file system, and what `write` returns.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let path = &match target_of(path)? {
        Target::Special => {
            let f = std::fs::OpenOptions::new().write(true).open(path)?;
            let mut out = std::io::BufWriter::new(f);
            write(&mut out)?;
            return out.flush();
        }
        Target::File(p) => p,
    };
    /// Removes the temporary file unless it was renamed: on an error, and
    /// on a panic in `write` too.
    struct Temp(std::path::PathBuf, bool);
    impl Drop for Temp {
        fn drop(&mut self) {
            if !self.1 {
                let _ = std::fs::remove_file(&self.0);
            }
        }
    }
    let mut tmp = Temp(temp_beside(path)?, false);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp.0)?);
    write(&mut out)?;
    let f = out.into_inner().map_err(std::io::IntoInnerError::into_error)?;
    f.sync_all()?;
    std::fs::rename(&tmp.0, path)?;
    tmp.1 = true;
    Ok(())
}

/// A set of files written as one: each is written beside its place first
/// ([`Staged::stage`]), and only when all are written are they put in place
/// ([`Staged::commit`]). A set dropped before its commit removes what it
/// wrote, so a failed write of one file of a set (a full disk, a size
/// limit) leaves every file that was there as it was.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("deadsim-doc-staged-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let mut set = sim::fsutil::Staged::default();
/// set.stage(&dir.join("a.txt"), b"a").unwrap();
/// set.stage(&dir.join("b.txt"), b"b").unwrap();
/// assert!(!dir.join("a.txt").exists(), "nothing is in place before the commit");
/// set.commit().unwrap();
/// assert_eq!(std::fs::read(dir.join("b.txt")).unwrap(), b"b");
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Default)]
pub struct Staged {
    /// (temporary file, the file it becomes), in staging order.
    files: Vec<(std::path::PathBuf, std::path::PathBuf)>,
    /// A folder made for the set, removed with it if it is left empty.
    folder: Option<std::path::PathBuf>,
}

impl Staged {
    /// Makes the folder the set goes into (one level): a set dropped before
    /// its commit removes it again if it is empty.
    pub fn make_folder(&mut self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir(dir)?;
        self.folder = Some(dir.to_path_buf());
        Ok(())
    }

    /// Writes `bytes` beside `path`, to be put in place by [`Staged::commit`].
    /// As with [`write_atomic`], links are followed, and a path that is not a
    /// regular file (a device, a FIFO) is written in place at once: there is
    /// nothing there to keep.
    pub fn stage(&mut self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let path = match target_of(path)? {
            Target::Special => return write_atomic(path, bytes),
            Target::File(p) => p,
        };
        // Two names of the set that lead to one file (a link, or `out/x`
        // and `./out/x`) would put one file's bytes in the other's place.
        let id = identity(&path);
        if self.files.iter().any(|(_, p)| identity(p) == id) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("another file of this set is written to {} too (a link?)", path.display()),
            ));
        }
        let tmp = temp_beside(&path)?;
        let result = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()
        })();
        match result {
            Ok(()) => {
                self.files.push((tmp, path));
                Ok(())
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    /// Where a write to `path` lands, as a set compares its names (links
    /// followed); `None` for a path that is not a regular file's.
    pub fn target(path: &Path) -> Option<std::path::PathBuf> {
        match target_of(path) {
            Ok(Target::File(p)) => Some(identity(&p)),
            _ => None,
        }
    }

    /// Puts every staged file in place (a rename each, in one folder, which
    /// does not fail for want of space). On an error the files not yet in
    /// place are removed and the error names the one that failed.
    pub fn commit(mut self) -> Result<(), (std::path::PathBuf, std::io::Error)> {
        let files = std::mem::take(&mut self.files);
        // In place or not, what was put there stays: the folder with it.
        self.folder = None;
        let mut left = files.into_iter();
        while let Some((tmp, path)) = left.next() {
            if let Err(e) = std::fs::rename(&tmp, &path) {
                let _ = std::fs::remove_file(&tmp);
                self.files = left.collect();
                return Err((path, e));
            }
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        for (tmp, _) in self.files.drain(..) {
            let _ = std::fs::remove_file(tmp);
        }
        if let Some(dir) = self.folder.take() {
            // Only if empty: remove_dir refuses a folder with anything in it.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// A file's one name: `path` (a target, its links resolved) with its folder
/// made absolute and free of `.`, `..` and links, so that two spellings of
/// a file not yet made compare equal (an existing one is canonical already).
fn identity(path: &Path) -> std::path::PathBuf {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => path.to_path_buf(),
    }
}

/// Where a write to a path lands.
enum Target {
    /// A regular file, existing or not, at this path (symbolic links resolved).
    File(std::path::PathBuf),
    /// Something that is not a regular file: written in place.
    Special,
}

fn target_of(path: &Path) -> std::io::Result<Target> {
    // What the kernel reaches through every link (`/dev/stdout` ends in a
    // pipe or a terminal whose link text is no path).
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(a_folder()),
        Ok(m) if !m.is_file() => return Ok(Target::Special),
        Ok(_) => return std::fs::canonicalize(path).map(Target::File),
        Err(_) => {}
    }
    let mut p = path.to_path_buf();
    // Follow links one at a time, so that a link to a file not yet made
    // resolves too; 40 is the kernel's own limit (ELOOP).
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Target::File(p)),
            Err(e) => return Err(e),
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(m) if m.is_file() => return Ok(Target::File(p)),
            Ok(m) if m.is_dir() => return Err(a_folder()),
            Ok(_) => return Ok(Target::Special),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "too many levels of symbolic links"))
}

#[cfg(unix)]
fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

#[cfg(not(unix))]
fn is_fifo(_: &Path) -> bool {
    false
}

fn a_folder() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, "it is a folder, not a file")
}

/// The temporary file [`write_atomic`] writes before renaming it to `path`.
fn temp_beside(path: &Path) -> std::io::Result<std::path::PathBuf> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "output path has no file name"))?;
    Ok(dir.join(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id())))
}

/// Checks that [`write_atomic`] could write `path` now, by creating (and
/// removing) the temporary file it would write: for a command to refuse an
/// output it cannot write before it does its work, not after.
///
/// ```
/// let dir = std::env::temp_dir();
/// assert!(sim::fsutil::check_writable(&dir.join("deadsim-doc-check.json")).is_ok());
/// assert!(sim::fsutil::check_writable(std::path::Path::new("/proc/self/no.json")).is_err());
/// ```
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    let path = match target_of(path)? {
        // A FIFO is not opened to check it: a reader waiting on it would
        // take the open and close for the whole of what it gets, and the
        // write after would wait for a reader that is gone.
        Target::Special if is_fifo(path) => return Ok(()),
        Target::Special => return std::fs::OpenOptions::new().write(true).open(path).map(drop),
        Target::File(p) => p,
    };
    let tmp = temp_beside(&path)?;
    std::fs::File::create(&tmp)?;
    std::fs::remove_file(&tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("deadsim-fsutil-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A FIFO stands for every path that is not a regular file (`/dev/null`,
    /// `/dev/stdout`): a test must not risk replacing a real device.
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_in_place_not_replaced() {
        let dir = scratch("fifo");
        let fifo = dir.join("out.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("no mkfifo here: skipped");
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(&fifo).unwrap())
        };
        // Checked first, as a command checks its outputs: the reader must
        // not take the check for the end of what it gets.
        check_writable(&fifo).unwrap();
        write_atomic(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(!kind.is_file() && !kind.is_symlink(), "the FIFO is still a FIFO");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 1, "{left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_set_that_fails_midway_leaves_the_files_there_as_they_were() {
        let dir = scratch("staged");
        for name in ["a", "b", "c"] {
            std::fs::write(dir.join(name), format!("old {name}")).unwrap();
        }
        let mut set = Staged::default();
        set.stage(&dir.join("a"), b"new a").unwrap();
        set.stage(&dir.join("b"), b"new b").unwrap();
        // The third cannot be written: its folder does not exist.
        assert!(set.stage(&dir.join("no-such-folder/c"), b"new c").is_err());
        drop(set);
        for name in ["a", "b", "c"] {
            assert_eq!(std::fs::read_to_string(dir.join(name)).unwrap(), format!("old {name}"));
        }
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 3, "no temporary file left: {left:?}");
        let mut set = Staged::default();
        set.stage(&dir.join("a"), b"new a").unwrap();
        set.stage(&dir.join("d"), b"new d").unwrap();
        set.commit().unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a")).unwrap(), "new a");
        // Two names of one file in a set: the second is refused, not swapped in.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("a", dir.join("also-a")).unwrap();
            let mut set = Staged::default();
            set.stage(&dir.join("a"), b"newer a").unwrap();
            let e = set.stage(&dir.join("also-a"), b"not a").unwrap_err();
            assert!(e.to_string().contains("another file of this set is written to"), "{e}");
            drop(set);
            std::fs::remove_file(dir.join("also-a")).unwrap();
            assert_eq!(std::fs::read_to_string(dir.join("a")).unwrap(), "new a");
        }
        assert_eq!(std::fs::read_to_string(dir.join("d")).unwrap(), "new d");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_followed_and_kept() {
        let dir = scratch("link");
        let link = dir.join("link.png");
        std::os::unix::fs::symlink("real.png", &link).unwrap();
        check_writable(&link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(dir.join("real.png")).unwrap(), b"new");
        write_atomic(&link, b"again").unwrap();
        assert_eq!(std::fs::read(dir.join("real.png")).unwrap(), b"again");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(check_writable(&dir).is_err(), "a folder is refused");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
