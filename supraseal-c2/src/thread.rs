//! The scheduling priority of the calling thread.

/// Sets the calling thread's nice value to `nice` (higher is lower
/// priority), so that work which may wait, such as synthesis running ahead
/// of the GPU, yields the cores to work that the GPU waits for (the
/// preamble and the kernel region's host side, on the native pool).
///
/// On Linux the nice value is per thread. Elsewhere this does nothing and
/// returns `Ok`. Raising the value needs no privilege; lowering it below
/// the current one usually does, and fails with the OS error.
pub fn set_current_thread_nice(nice: i32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: setpriority reads only its integer arguments. With
        // PRIO_PROCESS and who = 0, Linux applies it to the calling thread.
        let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
    Ok(())
}

/// The calling thread's nice value (Linux; `0` elsewhere).
pub fn current_thread_nice() -> std::io::Result<i32> {
    #[cfg(target_os = "linux")]
    {
        // getpriority may return -1 as a value: clear errno to tell it
        // from an error.
        // SAFETY: errno is thread-local; getpriority reads only its
        // integer arguments.
        unsafe { *libc::__errno_location() = 0 };
        let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let err = std::io::Error::last_os_error();
        if nice == -1 && err.raw_os_error() != Some(0) {
            return Err(err);
        }
        Ok(nice)
    }
    #[cfg(not(target_os = "linux"))]
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_the_nice_value_affects_only_the_calling_thread() {
        let before = current_thread_nice().unwrap();
        let target = (before + 3).min(19);
        let seen = std::thread::spawn(move || {
            set_current_thread_nice(target).unwrap();
            current_thread_nice().unwrap()
        })
        .join()
        .unwrap();
        if cfg!(target_os = "linux") {
            assert_eq!(seen, target);
        }
        assert_eq!(current_thread_nice().unwrap(), before);
    }
}
