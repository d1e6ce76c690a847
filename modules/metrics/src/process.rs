//! The process's own numbers, under the names every Prometheus client
//! library uses (`process_resident_memory_bytes`...), read from `/proc`.

use std::sync::OnceLock;

use bulwark_web::Metric;

pub fn metrics() -> Vec<Metric> {
    let mut out = vec![
        Metric::gauge(
            "bulwark_build_info",
            "The running Bulwark's version (always 1).",
            1.0,
        )
        .with("version", env!("CARGO_PKG_VERSION")),
    ];
    // SAFETY: sysconf only reads a system constant.
    let (page, ticks) = unsafe {
        (
            libc::sysconf(libc::_SC_PAGESIZE),
            libc::sysconf(libc::_SC_CLK_TCK),
        )
    };
    if let Ok(statm) = std::fs::read_to_string("/proc/self/statm")
        && let Some(resident) = statm.split_whitespace().nth(1)
        && let Ok(pages) = resident.parse::<f64>()
    {
        out.push(Metric::gauge(
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            pages * page as f64,
        ));
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        out.push(Metric::gauge(
            "process_open_fds",
            "Number of open file descriptors.",
            fds.count() as f64,
        ));
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        out.push(Metric::gauge(
            "process_max_fds",
            "Maximum number of open file descriptors.",
            limit.rlim_cur as f64,
        ));
    }
    // Fields after the command name (which may hold spaces) in /proc/self/stat:
    // utime and stime are the 12th and 13th of them, starttime the 20th.
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat")
        && let Some((_, after)) = stat.rsplit_once(')')
    {
        let fields: Vec<&str> = after.split_whitespace().collect();
        let field = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
        if let (Some(user), Some(system)) = (field(11), field(12)) {
            out.push(Metric {
                kind: bulwark_web::MetricKind::Counter,
                ..Metric::gauge(
                    "process_cpu_seconds_total",
                    "Total user and system CPU time spent in seconds.",
                    (user + system) / ticks as f64,
                )
            });
        }
        if let (Some(start), Some(boot)) = (field(19), boot_time()) {
            out.push(Metric::gauge(
                "process_start_time_seconds",
                "Start time of the process since the Unix epoch in seconds.",
                boot + start / ticks as f64,
            ));
        }
    }
    out
}

/// When the machine started, in seconds since the epoch (`btime` of
/// `/proc/stat`), read once.
fn boot_time() -> Option<f64> {
    static BOOT: OnceLock<Option<f64>> = OnceLock::new();
    *BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/stat")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("btime "))?
            .trim()
            .parse()
            .ok()
    })
}
