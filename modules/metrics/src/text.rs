//! The Prometheus text exposition format (version 0.0.4): a `# HELP` and a
//! `# TYPE` line per metric, then its samples, each with the site's label
//! first. Written here rather than with a client library: the samples exist
//! already (the site's own counters), and what remains is this formatting.

use std::collections::BTreeMap;
use std::fmt::Write;

use bulwark_web::{Metric, MetricKind};

pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The samples, grouped by metric in the order each metric first appears.
pub fn render(site: &str, metrics: &[Metric]) -> String {
    let mut order: Vec<&'static str> = Vec::new();
    let mut by_name: BTreeMap<&'static str, Vec<&Metric>> = BTreeMap::new();
    for m in metrics {
        let samples = by_name.entry(m.name).or_default();
        if samples.is_empty() {
            order.push(m.name);
        }
        samples.push(m);
    }
    let mut out = String::with_capacity(metrics.len() * 96);
    for name in order {
        let samples = &by_name[name];
        let first = samples[0];
        let kind = match first.kind {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
            MetricKind::Histogram => "histogram",
        };
        let _ = writeln!(out, "# HELP {name} {}", escape_help(first.help));
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for m in samples {
            out.push_str(name);
            out.push_str(m.suffix);
            out.push_str("{site=\"");
            escape_label(&mut out, site);
            out.push('"');
            for (label, value) in &m.labels {
                let _ = write!(out, ",{label}=\"");
                escape_label(&mut out, value);
                out.push('"');
            }
            let _ = writeln!(out, "}} {}", number(m.value));
        }
    }
    out
}

fn escape_help(help: &str) -> String {
    help.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_label(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_of_one_metric_share_their_help_and_labels_are_escaped() {
        let metrics = vec![
            Metric::counter("a_total", "As.", 3).with("rule", "x\"y"),
            Metric::gauge("b", "B\nline two.", 1.5),
            Metric::counter("a_total", "As.", 4).with("rule", "z"),
        ];
        assert_eq!(
            render("news", &metrics),
            "# HELP a_total As.\n# TYPE a_total counter\n\
             a_total{site=\"news\",rule=\"x\\\"y\"} 3\n\
             a_total{site=\"news\",rule=\"z\"} 4\n\
             # HELP b B\\nline two.\n# TYPE b gauge\n\
             b{site=\"news\"} 1.5\n"
        );
    }
}
