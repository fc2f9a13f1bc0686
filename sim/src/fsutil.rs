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
    let path = &match target_of(path)? {
        Target::Special => {
            let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
            f.write_all(bytes)?;
            return f.flush();
        }
        Target::File(p) => p,
    };
    let tmp = temp_beside(path)?;
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
