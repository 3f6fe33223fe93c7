//! Issue 32's figures: bytes per second per client at 30 snapshots/s for many_pyramids
//! with about 1,000 bodies in view (awake, then all asleep) and for rain4k; what
//! quantization, bit-packing and deltas each save; the client's position error under
//! 100 ms latency, 20 ms jitter and 5% loss; the server's CPU per client.
//!
//! `cargo run --release -p joule-examples --example net_figures [seconds]`

use std::collections::BTreeMap;
use std::time::Instant;

use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::math::Vec3;
use joule_physics::net::{
    Client, Codec, LinkConditions, NetConfig, NetMotion, Server, ServerDesc, ServerMessage,
    SimNetwork, SnapshotState, pump_client, pump_server,
};
use joule_physics::world::{World, WorldDesc};

const CLIENTS: u32 = 4;

struct Figures {
    bytes_per_second: f64,
    naive: f64,
    quantized: f64,
    packed: f64,
    in_view: usize,
    awake: usize,
    error_mean: f32,
    error_p99: f32,
    cpu_per_client_us: f64,
}

/// Runs `kind` (sleeping allowed or not) for `warm` seconds, then measures over
/// `seconds`; client 1's view is a circle of `radius` at the origin.
fn measure(
    kind: SceneKind,
    can_sleep: bool,
    radius: f32,
    warm: f64,
    seconds: f64,
    desc: ServerDesc,
) -> Figures {
    let mut scene = scenes::describe(kind);
    for b in &mut scene.bodies {
        b.can_sleep = can_sleep;
    }
    let mut world = World::new(
        WorldDesc {
            gravity: scene.gravity,
            ..WorldDesc::default()
        },
        JobSystem::new(1).expect("job system"),
    );
    scenes::build_desc(&scene, &mut world).expect("scene");
    let config = NetConfig {
        max_bodies: 1 << 16,
        ..NetConfig::default()
    };
    let codec = Codec::new(config).expect("config");
    let net = SimNetwork::new(LinkConditions::ISSUE_32, 32);
    let mut server = Server::new(world, codec.clone(), desc);
    let mut server_end = net.endpoint(0);
    let mut clients: Vec<_> = (1..=CLIENTS)
        .map(|c| {
            server.add_client(c, Vec3::ZERO, radius).expect("client");
            (Client::new(codec.clone(), u64::from(c)), net.endpoint(c))
        })
        .collect();
    // The server's positions of every 10th body, by tick, to measure the error.
    let mut history: Vec<BTreeMap<u32, Vec3>> = Vec::new();
    let (mut errors, mut snap_time, mut plain_time, mut snap_ticks, mut plain_ticks) =
        (Vec::new(), 0.0, 0.0, 0u32, 0u32);
    let (mut bytes0, mut naive, mut quantized, mut packed) = (0, 0.0, 0.0, 0.0);
    let tick_rate = 60.0;
    let end = warm + seconds;
    let mut tick = 0u32;
    while f64::from(tick) / tick_rate < end {
        tick += 1;
        let t = f64::from(tick) / tick_rate;
        net.advance(t);
        let measuring = t > warm;
        if (t - warm).abs() < 0.5 / tick_rate {
            bytes0 = server.stats(1).expect("client").snapshot_bytes;
        }
        let start = Instant::now();
        pump_server(&mut server, &mut server_end, t);
        let spent = start.elapsed().as_secs_f64();
        if measuring {
            if tick.is_multiple_of(2) {
                snap_time += spent;
                snap_ticks += 1;
            } else {
                plain_time += spent;
                plain_ticks += 1;
            }
        }
        let w = server.world();
        history.push(
            w.bodies()
                .filter_map(|b| {
                    server
                        .net_id(b.id())
                        .filter(|n| n % 10 == 0)
                        .map(|n| (n, b.position()))
                })
                .collect(),
        );
        for (client, end) in &mut clients {
            pump_client(client, end, 0, t + 5.0);
        }
        if measuring && tick.is_multiple_of(2) {
            // What the same view would cost without deltas, bit-packing or quantization.
            let c = &clients[0].0;
            let n = c
                .bodies()
                .values()
                .filter(|b| b.motion != NetMotion::Static)
                .count() as f64;
            naive += n * (4.0 + 13.0 * 4.0);
            quantized += n * (4.0 + 9.0 + 7.0 + 12.0);
            let full = SnapshotState {
                tick,
                bodies: w
                    .bodies()
                    .filter_map(|b| {
                        let id = server.net_id(b.id())?;
                        (c.bodies().get(&id)?.motion != NetMotion::Static).then(|| {
                            (
                                id,
                                codec.quantize(
                                    b.position(),
                                    b.rotation(),
                                    b.linear_velocity(),
                                    b.angular_velocity(),
                                ),
                            )
                        })
                    })
                    .collect(),
            };
            packed += ServerMessage::encode_snapshot(&codec, &full, None).len() as f64;
            let pt = c.presentation_time(t + 5.0);
            if let Some(pt) = pt {
                let k = pt * tick_rate;
                let (a, b) = (k.floor() as usize, k.ceil() as usize);
                for (&id, body) in c.bodies() {
                    if id % 10 != 0 || body.motion != NetMotion::Dynamic {
                        continue;
                    }
                    let (Some(pa), Some(pb)) = (
                        a.checked_sub(1)
                            .and_then(|a| history.get(a))
                            .and_then(|h| h.get(&id)),
                        b.checked_sub(1)
                            .and_then(|b| history.get(b))
                            .and_then(|h| h.get(&id)),
                    ) else {
                        continue;
                    };
                    let truth = pa.lerp(*pb, (k - a as f64) as f32);
                    if let Some(shown) = c.pose_at(id, pt) {
                        errors.push(Vec3::from(shown.translation).distance(truth));
                    }
                }
            }
        }
    }
    errors.sort_by(f32::total_cmp);
    let stats = server.stats(1).expect("client");
    let snapshots = seconds * 30.0;
    let snap_avg = snap_time / f64::from(snap_ticks.max(1));
    let plain_avg = plain_time / f64::from(plain_ticks.max(1));
    Figures {
        bytes_per_second: (stats.snapshot_bytes - bytes0) as f64 / seconds,
        naive: naive / snapshots * 30.0,
        quantized: quantized / snapshots * 30.0,
        packed: packed / snapshots * 30.0,
        in_view: clients[0].0.bodies().len(),
        awake: server.world().awake_body_count(),
        error_mean: errors.iter().sum::<f32>() / errors.len().max(1) as f32,
        error_p99: errors.get(errors.len() * 99 / 100).copied().unwrap_or(0.0),
        cpu_per_client_us: (snap_avg - plain_avg).max(0.0) / f64::from(CLIENTS) * 1e6,
    }
}

fn report(name: &str, f: &Figures) {
    println!(
        "{name}: {} bodies in view, {} awake in the world; {:.0} B/s per client ({:.1} kbit/s); without deltas {:.0} B/s, \
         without bit-packing {:.0} B/s, without quantization {:.0} B/s; error mean {:.2} mm, p99 {:.2} mm; \
         server CPU per client {:.0} us per snapshot",
        f.in_view,
        f.awake,
        f.bytes_per_second,
        f.bytes_per_second * 8.0 / 1000.0,
        f.packed,
        f.quantized,
        f.naive,
        f.error_mean * 1000.0,
        f.error_p99 * 1000.0,
        f.cpu_per_client_us
    );
}

fn main() {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(4.0);
    let unlimited = ServerDesc {
        bandwidth: u32::MAX / 64,
        ..ServerDesc::default()
    };
    // A circle of 14 m around the origin holds about 1,000 of many_pyramids' boxes.
    // Six seconds of warm-up: under the budget the view's 16 pyramids (1,444 bytes each
    // in full) are phased in about one per acknowledgement round trip.
    let awake = measure(
        SceneKind::ManyPyramids,
        false,
        14.0,
        6.0,
        seconds,
        ServerDesc::default(),
    );
    report(
        "many_pyramids, ~1,000 in view, awake, 256 kbit/s budget",
        &awake,
    );
    let awake_free = measure(
        SceneKind::ManyPyramids,
        false,
        14.0,
        3.0,
        seconds,
        unlimited.clone(),
    );
    report(
        "many_pyramids, ~1,000 in view, awake, no budget",
        &awake_free,
    );
    let asleep = measure(
        SceneKind::ManyPyramids,
        true,
        14.0,
        12.0,
        seconds,
        ServerDesc::default(),
    );
    report("many_pyramids, ~1,000 in view, asleep", &asleep);
    let rain = measure(
        SceneKind::Rain4k,
        true,
        1000.0,
        1.0,
        seconds,
        ServerDesc::default(),
    );
    report("rain4k, all in view, 256 kbit/s budget", &rain);
    let rain_free = measure(SceneKind::Rain4k, true, 1000.0, 1.0, seconds, unlimited);
    report("rain4k, all in view, no budget", &rain_free);
}
