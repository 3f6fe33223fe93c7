//! `joule-trace`: look at a saved joule-graph trace without writing code.
//!
//! ```text
//! joule-trace summary trace.json   # work, span, critical path, parallelism, busy time
//! joule-trace svg trace.json > timeline.svg
//! joule-trace dot trace.json | dot -Tsvg > graph.svg
//! ```
//!
//! The file is what `Trace::to_chrome_json` wrote (the same file opens in Perfetto).
#![forbid(unsafe_code)]

use std::process::ExitCode;

use joule_graph::Trace;

const USAGE: &str = "usage: joule-trace summary|svg|dot FILE\n\
    \n  summary  total work, span and critical path, parallelism, busy time per thread,\
    \n           the ten slowest tasks\
    \n  svg      a timeline (one lane per thread, critical path in red) on stdout\
    \n  dot      the graph in Graphviz DOT with task times on stdout\
    \n\nFILE is a Chrome trace JSON written by joule-graph (Trace::to_chrome_json).";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let [command, file] = args.as_slice() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if !matches!(command.as_str(), "summary" | "svg" | "dot") {
        eprintln!("joule-trace: unknown command `{command}`\n\n{USAGE}");
        return ExitCode::from(2);
    }
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("joule-trace: cannot read {file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let trace = match Trace::from_chrome_json(&text) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("joule-trace: {file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match command.as_str() {
        "summary" => print!("{}", trace.summary()),
        "svg" => print!("{}", trace.to_svg()),
        _ => print!("{}", trace.to_dot()),
    }
    ExitCode::SUCCESS
}
