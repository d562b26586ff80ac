//! The few operating-system calls the database makes outside the file system (RocksDB's
//! `Env` and `port/` give the same): random bytes, the host name, this thread's id and CPU
//! time, the allocator's figures, and lowering a pool thread's priorities. Kept here so the
//! crates above hold no `unsafe` for them.

/// Random bytes from the OS (`getrandom`), falling back to the clock and the process id.
pub fn fill_random(buf: &mut [u8]) {
    // SAFETY: getrandom writes at most `buf.len()` bytes into the valid, exclusively borrowed
    // buffer.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (t >> ((i % 16) * 8)) as u8 ^ (std::process::id() >> (i % 4)) as u8;
        }
    }
}

/// The machine's host name; empty when it cannot be read.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the valid, exclusively
    // borrowed buffer.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// This thread's id as RocksDB's LOG prints it (`pthread_self`).
pub fn thread_id() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as u64 }
}

/// This thread's CPU time in microseconds (RocksDB's `GetThreadCpuTimeNanos`); 0 where the
/// clock cannot be read.
pub fn thread_cpu_micros() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the call writes only it.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return 0;
    }
    (ts.tv_sec as u64).saturating_mul(1_000_000).saturating_add(ts.tv_nsec as u64 / 1000)
}

/// glibc's `mallinfo2` figures in bytes, as RocksDB's `DumpMallocStats` prints them for the
/// system allocator; None elsewhere.
pub fn malloc_stats_text() -> Option<String> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 takes no arguments and returns a plain struct by value; glibc
        // takes its arena locks itself, so any thread may call it at any time.
        let m = unsafe { libc::mallinfo2() };
        Some(format!(
            "glibc mallinfo2: arena: {} ordblks: {} hblkhd: {} uordblks: {} fordblks: {} keepcost: {}",
            m.arena, m.ordblks, m.hblkhd, m.uordblks, m.fordblks, m.keepcost
        ))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// Lowers the calling thread's priorities as RocksDB's thread pools do on Linux: nice 19 for
/// the CPU (`cpu`), the idle I/O class (`io`: `ioprio_set(IOPRIO_WHO_PROCESS, 0,
/// IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0))`). Failures are ignored, as RocksDB's; elsewhere
/// it does nothing (the database refuses the calls at open there).
pub fn lower_thread_priority(cpu: bool, io: bool) {
    #[cfg(target_os = "linux")]
    {
        if cpu {
            // SAFETY: setpriority on the calling thread (who = 0); no memory is passed.
            unsafe {
                libc::setpriority(libc::PRIO_PROCESS, 0, 19);
            }
        }
        if io {
            const IOPRIO_WHO_PROCESS: libc::c_long = 1;
            const IOPRIO_CLASS_IDLE: libc::c_long = 3;
            const IOPRIO_CLASS_SHIFT: libc::c_long = 13;
            // SAFETY: ioprio_set on the calling thread (who = 0); no memory is passed.
            unsafe {
                libc::syscall(
                    libc::SYS_ioprio_set,
                    IOPRIO_WHO_PROCESS,
                    0 as libc::c_long,
                    IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (cpu, io);
}

/// A hint to the processor to load the cache line at `p` into its caches (x86_64's
/// `prefetcht0`; nothing elsewhere). Never faults: `p` need not point to valid memory.
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that neither faults nor changes memory, whatever the
    // address; SSE is part of x86_64's baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_bytes_differ_and_cpu_time_moves() {
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        fill_random(&mut a);
        fill_random(&mut b);
        assert_ne!(a, b);
        let t0 = thread_cpu_micros();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        assert!(thread_cpu_micros() > t0);
        assert_ne!(thread_id(), 0);
    }
}
