//! Plays a recording in the browser: serves the viewer page and the recording on
//! localhost and prints the address to open.
//!
//! ```text
//! cargo run --release -p joule-examples --example pyramid -- --steps 240 --record pyramid.jrec
//! cargo run --release -p joule-examples --example view -- pyramid.jrec
//! ```
//!
//! Options: `--port N` (default 8017; 0 picks a free port).

use std::net::TcpListener;
use std::sync::Arc;

use joule_examples::viewer::{ViewerData, serve};
use joule_physics::recording::Recording;

fn main() {
    let mut file = None;
    let mut port = 8017u16;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => {
                port = args
                    .next()
                    .and_then(|p| p.parse().ok())
                    .unwrap_or_else(|| exit("--port needs a number"))
            }
            "--help" | "-h" => exit("usage: view RECORDING.jrec [--port N]"),
            _ => file = Some(a),
        }
    }
    let file = file.unwrap_or_else(|| exit("usage: view RECORDING.jrec [--port N]"));
    let bytes = std::fs::read(&file).unwrap_or_else(|e| exit(&format!("{file}: {e}")));
    let recording = Recording::read(&bytes).unwrap_or_else(|e| exit(&format!("{file}: {e}")));
    let data = Arc::new(ViewerData::new(&recording));
    let listener = TcpListener::bind(("127.0.0.1", port))
        .unwrap_or_else(|e| exit(&format!("port {port}: {e} (try --port 0)")));
    let addr = listener
        .local_addr()
        .expect("a bound socket has an address");
    println!(
        "{file}: {} frames, {} bodies\nopen http://{addr}/ in a browser (Ctrl-C to stop)",
        recording.frames.len(),
        recording.bodies.len()
    );
    serve(listener, data);
}

fn exit(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(2)
}
