//! Writing a file so that a reader, or a restart after a crash, sees the
//! old contents or the new, never a part.
//!
//! Parameters files, their sidecars and the daemon's keys are all written
//! this one way.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Buffer of the writer handed to the caller: parameters files are tens of
/// gigabytes written in small pieces.
const BUFFER: usize = 8 << 20;

/// Writes `path` whole through `write`: into a temporary file beside it
/// (named after it, starting with a dot), flushed and synced to disk, then
/// renamed over `path`, then the directory synced so that the rename
/// lasts. On any error the temporary file is removed and `path` is left
/// as it was.
pub fn write_atomically<E: From<io::Error>>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
) -> Result<(), E> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    let tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(dir)?;
    // Written through a second handle; `tmp` removes the file if anything
    // below fails.
    let mut out = BufWriter::with_capacity(BUFFER, tmp.as_file().try_clone()?);
    write(&mut out)?;
    out.flush()?;
    out.get_ref().sync_all()?;
    drop(out);
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir)?;
    Ok(())
}

/// Makes a rename in `dir` durable. Directories cannot be opened for
/// syncing everywhere; where they cannot, the rename stands unsynced.
fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir) {
        Ok(d) => match d.sync_all() {
            Err(e) if e.kind() != io::ErrorKind::PermissionDenied => Err(e),
            _ => Ok(()),
        },
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_is_replaced_whole_and_a_failed_write_leaves_it_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.params");
        write_atomically(&path, |out| out.write_all(b"first")).unwrap();
        write_atomically(&path, |out| out.write_all(b"second")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");

        let failed = write_atomically(&path, |out| {
            out.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        });
        assert_eq!(failed.unwrap_err().to_string(), "disk full");
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(entries(dir.path()), ["key.params"]);
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent").join("key.params");
        let err = write_atomically(&path, |out| out.write_all(b"x")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
