//! Imports run one way (DESIGN.md: world → step → stages → data, never back).
//!
//! Every file under `physics/src/` belongs to the layer of its top-level module, and a
//! `crate::` path in its code may name only a module of its own layer or one below. The
//! crate root (`lib.rs`) and the prelude re-export everything and stand outside the
//! layers; a file's test module (a `#[cfg(test)] mod` at the end) may reach up, as a test
//! builds a `World` to drive the part it checks. A new top-level module must be given a
//! layer here, or this test fails and says so.

use std::path::Path;

/// Top-level modules of `joule_physics`, lowest layer first.
const LAYERS: &[(&str, u8)] = &[
    // Geometry and math: imported by everything.
    ("math", 0),
    ("geometry", 0),
    // The data the stages work on.
    ("error", 1),
    ("material", 1),
    ("events", 1),
    ("body", 1),
    ("shape", 1),
    ("joint", 1),
    ("contact", 1),
    // The stages, and the settings they read.
    ("settings", 2),
    ("collision", 2),
    ("dynamics", 2),
    // The step graph.
    ("step", 3),
    // The user's surface.
    ("world", 4),
    // Game-level parts over the world's public surface.
    ("game", 5),
    ("character", 5),
    ("net", 5),
];

const OUTSIDE: &[&str] = &["lib", "prelude"];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

/// The violations in one file's text: `(line number, what)`.
fn violations(own: &str, text: &str) -> Vec<(usize, String)> {
    let Some(me) = layer(own) else {
        return vec![(
            0,
            format!("module `{own}` has no layer in tests/behaviour/layers.rs"),
        )];
    };
    let mut found = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        if line.starts_with("#[cfg(test)]")
            && lines[n + 1..]
                .iter()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.starts_with("mod "))
        {
            break;
        }
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = *line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            match layer(&name) {
                None => found.push((n + 1, format!("`crate::{name}` has no layer"))),
                Some(l) if l > me => found.push((
                    n + 1,
                    format!("`{own}` (layer {me}) imports `crate::{name}` (layer {l}): {code}"),
                )),
                Some(_) => {}
            }
        }
    }
    found
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("physics/src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn no_import_runs_back_up_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    assert!(files.len() > 40, "found only {} source files", files.len());
    let mut report = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a path");
        let own = first.as_os_str().to_str().expect("utf-8");
        let own = own.strip_suffix(".rs").unwrap_or(own);
        if OUTSIDE.contains(&own) {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("readable");
        for (line, what) in violations(own, &text) {
            report.push(format!("{}:{line}: {what}", rel.display()));
        }
    }
    assert!(
        report.is_empty(),
        "imports that run back up:\n{}",
        report.join("\n")
    );
}

#[test]
fn the_check_catches_an_import_up_and_allows_one_down() {
    let up = "use crate::body::Bodies;\nuse crate::world::World;\n";
    let v = violations("step", up);
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].0, 2);
    assert!(violations("world", up).is_empty());
    // Comments and the closing test module are not code the layers constrain.
    let tests = "//! see crate::world::World\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::world::World;\n}\n";
    assert!(violations("body", tests).is_empty());
    // A module nobody placed is reported, so a new folder gets a layer.
    assert_eq!(violations("body", "use crate::vehicles::Car;\n").len(), 1);
    assert_eq!(violations("vehicles", "").len(), 1);
}
