//! SVG timeline: one lane per thread, each span of work a bar labelled with its task's
//! name (nested spans drawn thinner inside the span they interrupted), the spans of tasks
//! on the critical path in red, a time axis in µs with gridlines at 1-2-5 steps, and a
//! header with wall time, work, span and parallelism. Hovering a bar shows its details.

use std::fmt::Write as _;

use super::{SpanKind, Trace};

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 170.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 48.0;
const LANE: f64 = 30.0;
const BAR: f64 = 22.0;
const AXIS: f64 = 36.0;
/// Rough width of one character of the 11px label font.
const CHAR_W: f64 = 6.2;

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A tick step of 1, 2 or 5 times a power of ten giving at most about ten ticks.
fn tick_step_us(total_us: f64) -> f64 {
    let raw = (total_us / 10.0).max(1e-3);
    let pow = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * pow)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * pow)
}

/// The label that fits in `width` pixels: the whole name, a shortened one, or none.
fn fit_label(name: &str, width: f64) -> Option<String> {
    let fits = ((width - 6.0) / CHAR_W).floor();
    if fits < 3.0 {
        return None;
    }
    let fits = fits as usize;
    let count = name.chars().count();
    if count <= fits {
        return Some(name.to_owned());
    }
    let short: String = name.chars().take(fits.saturating_sub(1)).collect();
    Some(format!("{short}…"))
}

pub(crate) fn to_svg(trace: &Trace) -> String {
    let lanes = trace.lanes().max(1);
    let end_ns = trace
        .spans
        .iter()
        .map(|s| s.end_ns)
        .chain(trace.tasks.iter().flatten().map(|r| r.end_ns))
        .max()
        .unwrap_or(0)
        .max(1);
    let total_us = end_ns as f64 / 1000.0;
    let plot_w = WIDTH - LEFT - RIGHT;
    let x = |ns: u64| LEFT + plot_w * ns as f64 / end_ns as f64;
    let height = TOP + LANE * lanes as f64 + AXIS;
    let critical = trace.critical_mask();
    let summary = trace.summary();

    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"Helvetica, Arial, sans-serif\" \
         font-size=\"11\">"
    );
    let _ = writeln!(
        out,
        "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    let _ = writeln!(
        out,
        "<text x=\"{LEFT}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">joule-graph \
         trace: {} tasks on {} threads</text>",
        trace.tasks.iter().flatten().count(),
        lanes
    );
    let _ = writeln!(
        out,
        "<text x=\"{LEFT}\" y=\"34\">wall {:.1} µs · work {:.1} µs · span {:.1} µs · \
         parallelism {:.2} · <tspan fill=\"#d62728\">■</tspan> critical path</text>",
        summary.wall_ns as f64 / 1000.0,
        summary.work_ns as f64 / 1000.0,
        summary.span_ns as f64 / 1000.0,
        summary.parallelism
    );

    // Axis and gridlines.
    let step = tick_step_us(total_us);
    let axis_y = TOP + LANE * lanes as f64;
    let mut k = 0u32;
    loop {
        let t_us = f64::from(k) * step;
        if t_us > total_us + 1e-9 {
            break;
        }
        let px = LEFT + plot_w * t_us / total_us;
        let _ = writeln!(
            out,
            "<line x1=\"{px:.1}\" y1=\"{TOP}\" x2=\"{px:.1}\" y2=\"{axis_y}\" \
             stroke=\"#e5e5e5\"/>"
        );
        let label = if step >= 1.0 {
            format!("{t_us:.0} µs")
        } else {
            format!("{t_us:.2} µs")
        };
        let _ = writeln!(
            out,
            "<text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{label}</text>",
            axis_y + 16.0
        );
        k += 1;
    }
    let _ = writeln!(
        out,
        "<line x1=\"{LEFT}\" y1=\"{axis_y}\" x2=\"{:.1}\" y2=\"{axis_y}\" stroke=\"#333\"/>",
        WIDTH - RIGHT
    );

    // Lanes.
    for lane in 0..lanes {
        let y = TOP + LANE * lane as f64;
        if lane % 2 == 1 {
            let _ = writeln!(
                out,
                "<rect x=\"{LEFT}\" y=\"{y}\" width=\"{plot_w}\" height=\"{LANE}\" \
                 fill=\"#f7f7f7\"/>"
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 8.0,
            y + LANE / 2.0 + 4.0,
            escape(&trace.thread_name(lane))
        );
    }

    // Spans, nested ones thinner (spans are sorted by thread, then start, outer first).
    let mut stack: Vec<usize> = Vec::new();
    for (i, s) in trace.spans.iter().enumerate() {
        while let Some(&top) = stack.last() {
            let t = &trace.spans[top];
            if t.thread != s.thread || t.end_ns <= s.start_ns {
                stack.pop();
            } else {
                break;
            }
        }
        let depth = stack.len() as f64;
        stack.push(i);
        let name = trace
            .graph
            .tasks
            .get(s.task)
            .map_or("?", |t| t.name.as_str());
        let on_path = critical.get(s.task).copied().unwrap_or(false);
        let fill = match (s.kind, on_path) {
            // Waiting is drawn pale, whatever the task: it is not work.
            (SpanKind::Wait, _) => "#e4e4e4",
            (SpanKind::Body, false) => "#4a90d9",
            (SpanKind::Chunk { .. }, false) => "#7fb3e6",
            (SpanKind::Child, false) => "#6cc08b",
            (SpanKind::Body, true) => "#d62728",
            (_, true) => "#ee7a6b",
        };
        let inset = (depth * 4.0).min(BAR / 2.0 - 2.0);
        let bar_h = BAR - 2.0 * inset;
        let y = TOP + LANE * s.thread as f64 + (LANE - BAR) / 2.0 + inset;
        let x0 = x(s.start_ns);
        let w = (x(s.end_ns) - x0).max(0.75);
        let detail = match s.kind {
            SpanKind::Body => String::new(),
            SpanKind::Chunk { start, end } => format!(" chunk {start}..{end}"),
            SpanKind::Child => " child".to_owned(),
            SpanKind::Wait => " waiting".to_owned(),
        };
        let _ = writeln!(
            out,
            "<g><title>{}{detail}: {:.2} µs at {:.2} µs</title><rect x=\"{x0:.2}\" \
             y=\"{y:.1}\" width=\"{w:.2}\" height=\"{bar_h:.1}\" rx=\"2\" fill=\"{fill}\" \
             stroke=\"#ffffff\" stroke-width=\"0.5\"/>",
            escape(name),
            s.duration_ns() as f64 / 1000.0,
            s.start_ns as f64 / 1000.0
        );
        if let Some(label) = fit_label(name, w) {
            let _ = writeln!(
                out,
                "<text x=\"{:.2}\" y=\"{:.1}\" fill=\"#ffffff\">{}</text>",
                x0 + 3.0,
                y + bar_h / 2.0 + 4.0,
                escape(&label)
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_one_two_five() {
        assert_eq!(tick_step_us(100.0), 10.0);
        assert_eq!(tick_step_us(150.0), 20.0);
        assert_eq!(tick_step_us(4000.0), 500.0);
        assert!((tick_step_us(0.9) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn labels_fit_or_shorten() {
        assert_eq!(fit_label("ai", 100.0).as_deref(), Some("ai"));
        assert_eq!(fit_label("animation", 40.0).as_deref(), Some("anim…"));
        assert_eq!(fit_label("animation", 10.0), None);
    }
}
