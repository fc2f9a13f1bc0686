//! Writing files whole or not at all.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a temporary file beside `path`, then renames it over
/// `path`, so a reader never sees a partial file and a failure leaves none.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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
    if path.is_dir() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "it is a folder, not a file"));
    }
    let tmp = temp_beside(path)?;
    std::fs::File::create(&tmp)?;
    std::fs::remove_file(&tmp)
}
