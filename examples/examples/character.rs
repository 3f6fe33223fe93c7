//! A character walks a scripted course on the terrain level (issue 31): it pushes three
//! crates, walks up and down the mesh ramp, rides a turntable, climbs and descends
//! stairs, is stopped by a 55° slope, and walks home. Prints each leg's outcome.
//!
//! `cargo run --release -p joule-examples --example character -- --record character.jrec`
//! then `cargo run --release -p joule-examples --example view -- character.jrec` and open
//! the address with `?follow=BODY` (the id it prints) to have the camera follow it.

use joule_examples::character_course::{Walker, build_course, run_course};
use joule_examples::scenes;
use joule_jobs::JobSystem;
use joule_physics::recording::{RecordOptions, Recorder};
use joule_physics::world::{World, WorldDesc};

fn main() {
    let mut record = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--record" => record = args.next(),
            _ => {
                eprintln!("usage: character [--record FILE]");
                std::process::exit(2);
            }
        }
    }
    let mut world = World::new(WorldDesc::default(), JobSystem::new(1).expect("job system"));
    let course = build_course(&mut world).expect("the course builds");
    let mut walker = Walker::new(&mut world).expect("the character's body");
    let body = walker.character.body().expect("attached");
    let mut recorder = record.as_ref().map(|path| {
        let file = std::fs::File::create(path).unwrap_or_else(|e| {
            eprintln!("--record {path}: {e}");
            std::process::exit(2);
        });
        let mut r = Recorder::new(
            std::io::BufWriter::new(file),
            &world,
            scenes::DT,
            RecordOptions::default(),
        )
        .expect("write the recording's header");
        r.record(&world, None).expect("record the first frame");
        r
    });
    run_course(&mut world, &course, &mut walker, 60 * 120, |w| {
        if let Some(r) = recorder.as_mut() {
            r.record(w, None).expect("record a step");
        }
    });
    for (leg, report) in walker.legs().iter().zip(&walker.reports) {
        let outcome = match (report.reached, leg.reachable) {
            (true, true) => "arrived",
            (false, false) => "stopped, as it should",
            (true, false) => "ARRIVED (should not have)",
            (false, true) => "DID NOT ARRIVE",
        };
        println!(
            "{:<22} {outcome:<22} {:5.1} s, highest centre {:5.2} m, {} frames off the ground{}",
            leg.name,
            report.seconds,
            report.highest,
            report.airborne,
            if report.ride_drift > 0.0 {
                format!(", drift on the turntable {:.1} mm", report.ride_drift * 1e3)
            } else {
                String::new()
            }
        );
    }
    for (k, id) in course.crates.iter().enumerate() {
        let p = world.position(*id).expect("a crate");
        println!("crate {k} at ({:.2}, {:.2}, {:.2})", p.x, p.y, p.z);
    }
    if let Some(path) = &record {
        println!(
            "recorded {path}; view it with ?follow={} to follow the character",
            body.index()
        );
    }
}
