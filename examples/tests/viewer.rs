//! The viewer in a real browser: a headless Chromium opens the page on a recorded
//! pyramid, and the screenshot must show the pyramid (pixels unlike the background where
//! the camera frames it) and a bare background elsewhere.
//!
//! Needs `chromium` (Debian's package; `.ci/run` installs it). With `CI` set a missing
//! browser fails the test; elsewhere the test is skipped with a printed reason.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use joule_examples::scenes::{self, SceneKind};
use joule_examples::viewer::{ViewerData, serve};
use joule_jobs::JobSystem;
use joule_physics::recording::{RecordOptions, Recorder, Recording};
use joule_physics::world::{World, WorldDesc};

/// The page's background colour (#16181d in index.html).
const BACKGROUND: [u8; 3] = [0x16, 0x18, 0x1d];

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

fn record_pyramid() -> Vec<u8> {
    let mut world = World::new(WorldDesc::default(), JobSystem::new(1).unwrap());
    scenes::build(SceneKind::Pyramid20, &mut world).unwrap();
    let mut rec = Recorder::new(Vec::new(), &world, scenes::DT, RecordOptions::default()).unwrap();
    rec.record(&world, None).unwrap();
    for _ in 0..30 {
        let trace = world.step_traced(scenes::DT);
        rec.record(&world, Some(&trace)).unwrap();
    }
    rec.finish().unwrap()
}

/// (width, height, RGB pixels) of a PNG.
fn decode(path: &Path) -> (usize, usize, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let pixels = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width as usize, info.height as usize, pixels)
}

/// Fraction of pixels in the box (fractions of width and height) that differ from the
/// background by more than 40 in some channel (anti-aliasing and the grid stay below).
fn busy_fraction(img: &(usize, usize, Vec<[u8; 3]>), x0: f32, x1: f32, y0: f32, y1: f32) -> f32 {
    let (w, h, px) = img;
    let (xa, xb) = ((x0 * *w as f32) as usize, (x1 * *w as f32) as usize);
    let (ya, yb) = ((y0 * *h as f32) as usize, (y1 * *h as f32) as usize);
    let mut busy = 0;
    for y in ya..yb {
        for x in xa..xb {
            let p = px[y * w + x];
            if (0..3).any(|c| p[c].abs_diff(BACKGROUND[c]) > 40) {
                busy += 1;
            }
        }
    }
    busy as f32 / ((xb - xa) * (yb - ya)) as f32
}

#[test]
fn headless_chromium_shows_the_recorded_pyramid() {
    let Some(chromium) = find_chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!(
                "CI is set but chromium is missing: .ci/run installs it (apt-get install chromium)"
            );
        }
        println!("skipped: no chromium on PATH (apt-get install chromium to run this test)");
        return;
    };
    let recording = Recording::read(&record_pyramid()).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let data = Arc::new(ViewerData::new(&recording));
    std::thread::spawn(move || serve(listener, data));

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("viewer-test");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let shot = dir.join("viewer.png");
    let out = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--hide-scrollbars",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--window-size=960,720",
            "--virtual-time-budget=20000",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("http://{addr}/?frame=last&play=0"))
        .output()
        .expect("chromium starts");
    assert!(
        shot.is_file(),
        "no screenshot; chromium said: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = decode(&shot);
    assert_eq!((img.0, img.1), (960, 720));
    // The 3D view is the top of the page (above the 220 px of controls and timelines);
    // the camera centres the moving bodies in it, so the pyramid fills its middle.
    let view_bottom = (720.0 - 230.0) / 720.0;
    let middle = busy_fraction(&img, 0.4, 0.6, 0.35 * view_bottom, 0.65 * view_bottom);
    assert!(middle > 0.6, "pyramid region mostly background: {middle}");
    // The sky above it (top right: the HUD text is top left) is background.
    let sky = busy_fraction(&img, 0.8, 0.98, 0.08 * view_bottom, 0.15 * view_bottom);
    assert!(sky < 0.02, "sky region not background: {sky}");
}
