//! Input checks every command makes before its long work: counts that must
//! be positive, and output paths that must be writable.

use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};

/// An argument that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A count that must be positive is zero.
    #[error("{flag} must be at least 1")]
    Zero {
        /// The flag (or config key) that is zero.
        flag: &'static str,
    },
    /// A list flag with no entries.
    #[error("{flag} is empty")]
    EmptyList {
        /// The flag.
        flag: &'static str,
    },
    /// A count above what the run has.
    #[error("{flag}: {value} is more than the {max} there are")]
    TooMany {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: usize,
        /// The most it may be.
        max: usize,
    },
    /// An output file that cannot be written.
    #[error("cannot write {}", path.display())]
    Unwritable {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// Refuses `value == 0` for `flag`.
pub fn positive(flag: &'static str, value: usize) -> Result<usize, InputError> {
    if value == 0 {
        return Err(InputError::Zero { flag });
    }
    Ok(value)
}

/// Refuses an empty list, or one with a zero in it, for `flag`.
pub fn positive_list(flag: &'static str, values: &[usize]) -> Result<(), InputError> {
    if values.is_empty() {
        return Err(InputError::EmptyList { flag });
    }
    for &value in values {
        positive(flag, value)?;
    }
    Ok(())
}

/// Checks that `path` can be written, without changing what is there: an
/// existing file is opened for writing (not truncated), a new one is
/// created and removed again.
pub fn writable_file(path: &Path) -> Result<(), InputError> {
    let refuse = |source| InputError::Unwritable {
        path: path.to_owned(),
        source,
    };
    if path.is_dir() {
        let source = io::Error::other("it is a directory");
        return Err(refuse(source));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            let why = format!("no directory {}", parent.display());
            return Err(refuse(io::Error::new(io::ErrorKind::NotFound, why)));
        }
    }
    if path.exists() {
        return OpenOptions::new()
            .write(true)
            .open(path)
            .map(drop)
            .map_err(refuse);
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(refuse)?;
    std::fs::remove_file(path).map_err(refuse)
}

/// Checks that files can be written in the directory `dir`, creating it
/// (and its parents) when it does not exist.
pub fn writable_dir(dir: &Path) -> Result<(), InputError> {
    std::fs::create_dir_all(dir).map_err(|source| InputError::Unwritable {
        path: dir.to_owned(),
        source,
    })?;
    let probe = dir.join(format!(".cuzk-write-test-{}", std::process::id()));
    writable_file(&probe).map_err(|error| match error {
        InputError::Unwritable { source, .. } => InputError::Unwritable {
            path: dir.to_owned(),
            source,
        },
        other => other,
    })
}

/// [`writable_file`] for an optional output flag.
pub fn writable_output(path: Option<&PathBuf>) -> Result<(), InputError> {
    path.map_or(Ok(()), |p| writable_file(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_file_leaves_no_trace_and_keeps_contents() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.json");
        writable_file(&new).unwrap();
        assert!(!new.exists());
        let old = dir.path().join("old.json");
        std::fs::write(&old, "kept").unwrap();
        writable_file(&old).unwrap();
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "kept");
        assert!(writable_file(dir.path()).is_err());
        let missing = dir.path().join("no/such");
        let InputError::Unwritable { source, .. } = writable_file(&missing.join("x")).unwrap_err()
        else {
            panic!("not refused as unwritable")
        };
        assert_eq!(
            source.to_string(),
            format!("no directory {}", missing.display())
        );
        // A bare file name is in the current directory, which exists.
        assert!(!matches!(
            writable_file(Path::new("cuzk-write-probe-that-is-removed")),
            Err(InputError::Unwritable { ref source, .. }) if source.to_string().starts_with("no directory")
        ));
        let made = dir.path().join("made/here");
        writable_dir(&made).unwrap();
        assert_eq!(std::fs::read_dir(&made).unwrap().count(), 0);
        assert!(writable_dir(&old).is_err());
    }

    #[test]
    fn zero_and_empty_are_refused() {
        assert_eq!(positive("--requests", 3).unwrap(), 3);
        let zero = positive("--requests", 0).unwrap_err().to_string();
        assert_eq!(zero, "--requests must be at least 1");
        assert!(positive_list("--gpu-workers-list", &[]).is_err());
        assert!(positive_list("--gpu-workers-list", &[1, 0]).is_err());
        positive_list("--gpu-workers-list", &[1, 2]).unwrap();
    }
}
