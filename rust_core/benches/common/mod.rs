//! What the benches print beside criterion's wall-clock medians: work per CPU-second of the
//! measuring thread, as the median of several timed runs with their spread. The machine is
//! shared and a single run can be off by a third either way.

/// CPU time of this thread in ns (`CLOCK_THREAD_CPUTIME_ID`), `None` where there is none.
/// Not `/proc/thread-self/schedstat`: some kernels advance it by whole scheduler ticks (4 ms
/// here), a third of a 12 ms run.
pub fn thread_cpu_ns() -> Option<u64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    (rc == 0).then(|| t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
}

/// Runs `work` `runs` times; each run returns how many items it did. Returns items per
/// CPU-second as (median, lowest, highest), or `None` without a per-thread CPU clock.
#[allow(dead_code)]
pub fn per_cpu_second(runs: usize, mut work: impl FnMut() -> u64) -> Option<(f64, f64, f64)> {
    let mut rates = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t0 = thread_cpu_ns()?;
        let items = work();
        let ns = thread_cpu_ns()?.saturating_sub(t0).max(1);
        rates.push(items as f64 * 1e9 / ns as f64);
    }
    rates.sort_by(f64::total_cmp);
    Some((rates[rates.len() / 2], rates[0], rates[rates.len() - 1]))
}
