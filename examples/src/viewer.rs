//! The recording viewer's server: serves the page in `examples/viewer/` (embedded in the
//! binary, with its vendored three.js, so it works offline) and a recording converted to
//! what the page reads without a decoder of its own:
//!
//! | path | content |
//! |---|---|
//! | `/scene.json` | header, bodies (shapes, motion), per frame: step, wall time, contact offsets |
//! | `/poses.bin` | little-endian f32, `frames × bodies × 7` (position, rotation xyzw; NaN before a body exists or after it is removed) |
//! | `/states.bin` | little-endian u32, `frames × bodies` (the recording's state words) |
//! | `/contacts.bin` | little-endian f32, 7 per contact point, frames one after another |
//! | `/trace/N.json` | frame N's job trace: threads, labels, spans `[label, thread, start_ns, end_ns]` |
//!
//! Why convert on the server: the recording is postcard (varints, serde enums), which a
//! page would need a hand-written decoder for; flat arrays go straight into
//! `Float32Array`s. Traces are served one frame at a time since a whole run's are most of
//! the file.
//!
//! The server is a small blocking `std::net` loop (a thread per connection): it serves a
//! few files to one local browser, which needs no HTTP crate.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use joule_physics::recording::{
    CONTACT_FLOATS, FrameTrace, POSE_FLOATS, RecordedShape, Recording, STATE_REMOVED,
};
use serde_json::{Value, json};

/// The page and its scripts, embedded at compile time.
const FILES: [(&str, &str, &[u8]); 5] = [
    (
        "/",
        "text/html; charset=utf-8",
        include_bytes!("../viewer/index.html"),
    ),
    (
        "/viewer.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../viewer/viewer.js"),
    ),
    (
        "/vendor/three.module.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../viewer/vendor/three.module.js"),
    ),
    (
        "/vendor/three.core.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../viewer/vendor/three.core.js"),
    ),
    (
        "/vendor/OrbitControls.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../viewer/vendor/OrbitControls.js"),
    ),
];

/// A recording converted to what the page fetches.
#[derive(Debug)]
pub struct ViewerData {
    scene_json: Vec<u8>,
    poses: Vec<u8>,
    states: Vec<u8>,
    contacts: Vec<u8>,
    traces: Vec<Option<FrameTrace>>,
}

fn shape_json(shape: &RecordedShape) -> Value {
    match shape {
        RecordedShape::Sphere { radius } => json!({"kind": "sphere", "radius": radius}),
        RecordedShape::Box { half_extents } => json!({"kind": "box", "half": half_extents}),
        RecordedShape::Capsule {
            half_height,
            radius,
        } => json!({"kind": "capsule", "halfHeight": half_height, "radius": radius}),
        RecordedShape::Cylinder {
            half_height,
            radius,
        } => json!({"kind": "cylinder", "halfHeight": half_height, "radius": radius}),
        RecordedShape::ConvexHull { vertices, faces } => {
            json!({"kind": "hull", "vertices": vertices, "faces": faces})
        }
        RecordedShape::HalfSpace { normal, offset } => {
            json!({"kind": "halfspace", "normal": normal, "offset": offset})
        }
        RecordedShape::Compound { children } => {
            let children: Vec<Value> = children
                .iter()
                .map(|c| {
                    json!({
                        "shape": shape_json(&c.shape),
                        "position": c.position,
                        "rotation": c.rotation,
                    })
                })
                .collect();
            json!({"kind": "compound", "children": children})
        }
        RecordedShape::Mesh {
            vertices,
            triangles,
        } => json!({"kind": "mesh", "vertices": vertices, "triangles": triangles}),
        RecordedShape::Bounds { min, max } => json!({"kind": "bounds", "min": min, "max": max}),
    }
}

impl ViewerData {
    /// Converts a recording.
    #[must_use]
    pub fn new(rec: &Recording) -> ViewerData {
        let bodies = rec.bodies.len();
        let mut poses = Vec::with_capacity(rec.frames.len() * bodies * POSE_FLOATS * 4);
        let mut states = Vec::with_capacity(rec.frames.len() * bodies * 4);
        let mut contacts = Vec::new();
        let mut frames = Vec::with_capacity(rec.frames.len());
        let mut contact_start = 0usize;
        for f in &rec.frames {
            let present = f.poses.len() / POSE_FLOATS;
            for &x in &f.poses {
                poses.extend_from_slice(&x.to_le_bytes());
            }
            for _ in present * POSE_FLOATS..bodies * POSE_FLOATS {
                poses.extend_from_slice(&f32::NAN.to_le_bytes());
            }
            for k in 0..bodies {
                let s =
                    f.states
                        .get(k)
                        .copied()
                        .unwrap_or(if k < present { 0 } else { STATE_REMOVED });
                states.extend_from_slice(&s.to_le_bytes());
            }
            for &x in &f.contacts {
                contacts.extend_from_slice(&x.to_le_bytes());
            }
            let points = f.contacts.len() / CONTACT_FLOATS;
            frames.push(json!({
                "step": f.step,
                "wallNs": f.trace.as_ref().map(|t| t.wall_ns),
                "contactStart": contact_start,
                "contactCount": points,
            }));
            contact_start += points;
        }
        let scene = json!({
            "version": rec.header.version,
            "dt": rec.header.dt,
            "gravity": rec.header.gravity,
            "bodies": rec.bodies.iter().map(|b| json!({
                "index": b.index,
                "generation": b.generation,
                "motion": b.motion,
                "sensor": b.is_sensor,
                "shape": shape_json(&b.shape),
            })).collect::<Vec<_>>(),
            "frames": frames,
        });
        ViewerData {
            scene_json: serde_json::to_vec(&scene).expect("a JSON value serialises"),
            poses,
            states,
            contacts,
            traces: rec.frames.iter().map(|f| f.trace.clone()).collect(),
        }
    }

    /// The body of a GET for `path` and its content type, or `None` (404).
    #[must_use]
    pub fn get(&self, path: &str) -> Option<(&'static str, Vec<u8>)> {
        let path = path.split('?').next().unwrap_or(path);
        let path = if path == "/index.html" { "/" } else { path };
        if let Some((_, ty, body)) = FILES.iter().find(|(p, _, _)| *p == path) {
            return Some((ty, body.to_vec()));
        }
        const BIN: &str = "application/octet-stream";
        match path {
            "/scene.json" => Some(("application/json", self.scene_json.clone())),
            "/poses.bin" => Some((BIN, self.poses.clone())),
            "/states.bin" => Some((BIN, self.states.clone())),
            "/contacts.bin" => Some((BIN, self.contacts.clone())),
            _ => {
                let n: usize = path
                    .strip_prefix("/trace/")?
                    .strip_suffix(".json")?
                    .parse()
                    .ok()?;
                let trace = self.traces.get(n)?;
                let value = match trace {
                    None => Value::Null,
                    Some(t) => json!({
                        "threads": t.threads,
                        "labels": t.labels,
                        "wallNs": t.wall_ns,
                        "spans": t.spans.iter()
                            .map(|s| [u64::from(s.label), u64::from(s.thread), s.start_ns, s.end_ns])
                            .collect::<Vec<_>>(),
                    }),
                };
                Some((
                    "application/json",
                    serde_json::to_vec(&value).expect("a JSON value serialises"),
                ))
            }
        }
    }
}

/// Serves `data` on `listener` until the process ends (one thread per connection).
pub fn serve(listener: TcpListener, data: Arc<ViewerData>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let data = Arc::clone(&data);
        std::thread::spawn(move || {
            // A browser that drops a connection is not an error worth reporting.
            let _ = handle(stream, &data);
        });
    }
}

fn handle(stream: TcpStream, data: &ViewerData) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request)? == 0 {
            return Ok(());
        }
        // Skip the headers; the server needs only the request line.
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
                break;
            }
        }
        let mut parts = request.split_whitespace();
        let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
        let (status, ty, body) = match (method, data.get(path)) {
            ("GET", Some((ty, body))) => ("200 OK", ty, body),
            ("GET", None) => ("404 Not Found", "text/plain", b"not found".to_vec()),
            _ => ("405 Method Not Allowed", "text/plain", b"GET only".to_vec()),
        };
        write!(
            out,
            "HTTP/1.1 {status}\r\nContent-Type: {ty}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\r\n",
            body.len()
        )?;
        out.write_all(&body)?;
        out.flush()?;
    }
}
