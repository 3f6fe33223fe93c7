//! Issue 32's figures: bytes per second per client at 30 snapshots/s for many_pyramids
//! with over 1,000 bodies in view awake and moving (knocked over by volleys of heavy
//! balls), then all asleep, and for rain4k; what quantization, bit-packing and deltas
//! each save; the client's position error under 100 ms latency, 20 ms jitter and 5%
//! loss, inside its area of interest and over every body it shows; the server's CPU per
//! client.
//!
//! `cargo run --release -p joule-examples --example net_figures [seconds] [name filter]
//! [dead-reckoning horizon, s]`

use std::collections::BTreeMap;
use std::time::Instant;

use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::net::{
    Client, Codec, LinkConditions, NetConfig, NetMotion, Server, ServerDesc, ServerMessage,
    SimNetwork, SnapshotState, pump_client, pump_server,
};
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

const CLIENTS: u32 = 4;
/// Every this many net ids, one body's error is sampled.
const SAMPLE_EVERY: u32 = 5;

/// One measured run.
struct Run {
    kind: SceneKind,
    can_sleep: bool,
    /// Client 1's area of interest (all clients share it).
    point: Vec3,
    radius: f32,
    warm: f64,
    seconds: f64,
    desc: ServerDesc,
    /// The clients' dead-reckoning horizon, seconds (0: off).
    horizon: f32,
    /// Volleys of heavy balls through the pyramids in view, every 0.75 s from 1.5 s
    /// before measuring, alternately from -z and +z, two per pyramid (at its base and
    /// 3 m up).
    volleys: bool,
}

#[derive(Default)]
struct Figures {
    bytes_per_second: f64,
    naive: f64,
    quantized: f64,
    packed: f64,
    /// Means over the measured snapshots of client 1's view: bodies in it that move,
    /// those the server has awake, those moving faster than 0.1 m/s.
    in_view: f64,
    awake_in_view: f64,
    moving_in_view: f64,
    /// Error of sampled dynamic bodies whose server position is inside the area.
    inside: Vec<f32>,
    /// Error of every sampled dynamic body the client shows, inside or not.
    shown: Vec<f32>,
    /// Sampled bodies inside the area the client did not show, per sample.
    absent_inside: f64,
    /// Sampled dynamic bodies in the world the client did not show, per sample.
    absent_all: f64,
    /// Sampled dynamic bodies in the world, per sample.
    sampled_all: f64,
    cpu_per_client_us: f64,
}

fn mean_p99(v: &mut [f32]) -> (f32, f32) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.sort_by(f32::total_cmp);
    (
        v.iter().sum::<f32>() / v.len() as f32,
        v[(v.len() * 99 / 100).min(v.len() - 1)],
    )
}

/// Fires two heavy balls at each pyramid whose top is inside the area.
fn volley(world: &mut World, tops: &[Vec3], point: Vec3, radius: f32, from_minus_z: bool) {
    let ball = Shape::sphere(0.6).expect("radius");
    let (dz, v) = if from_minus_z {
        (-2.0, 14.0)
    } else {
        (2.0, -14.0)
    };
    for top in tops {
        if Vec3::new(top.x, 0.0, top.z).distance(Vec3::new(point.x, 0.0, point.z)) > radius {
            continue;
        }
        for y in [0.8, 3.0] {
            let desc = BodyDesc {
                density: 20_000.0,
                linear_velocity: Vec3::new(0.0, 0.0, v),
                ..BodyDesc::dynamic(ball.clone(), Vec3::new(top.x, y, top.z + dz))
            };
            world.create_body(&desc).expect("ball");
        }
    }
}

fn measure(run: &Run) -> Figures {
    let mut scene = scenes::describe(run.kind);
    for b in &mut scene.bodies {
        b.can_sleep = run.can_sleep;
    }
    let tops: Vec<Vec3> = scene
        .tops
        .iter()
        .map(|&i| scene.bodies[i].position)
        .collect();
    let mut world = World::new(
        WorldDesc {
            gravity: scene.gravity,
            ..WorldDesc::default()
        },
        JobSystem::new(1).expect("job system"),
    );
    scenes::build_desc(&scene, &mut world).expect("scene");
    let codec = Codec::new(NetConfig {
        dead_reckoning_horizon: run.horizon,
        ..NetConfig::default()
    })
    .expect("config");
    let net = SimNetwork::new(LinkConditions::ISSUE_32, 32);
    let mut server = Server::new(world, codec.clone(), run.desc.clone());
    let mut server_end = net.endpoint(0);
    let mut clients: Vec<_> = (1..=CLIENTS)
        .map(|c| {
            server.add_client(c, run.point, run.radius).expect("client");
            (Client::new(codec.clone(), u64::from(c)), net.endpoint(c))
        })
        .collect();
    // The server's dynamic sampled bodies' positions after each tick.
    let mut history: Vec<BTreeMap<u32, Vec3>> = Vec::new();
    let mut f = Figures::default();
    let (mut snap_time, mut plain_time, mut snap_ticks, mut plain_ticks) = (0.0, 0.0, 0u32, 0u32);
    let (mut bytes0, mut samples, mut error_samples) = (0, 0u32, 0u32);
    let tick_rate = 60.0;
    let end = run.warm + run.seconds;
    let mut next_volley = run.warm - 1.5;
    let mut from_minus_z = true;
    let mut tick = 0u32;
    while f64::from(tick) / tick_rate < end {
        tick += 1;
        let t = f64::from(tick) / tick_rate;
        if run.volleys && t >= next_volley {
            volley(
                server.world_mut(),
                &tops,
                run.point,
                run.radius,
                from_minus_z,
            );
            from_minus_z = !from_minus_z;
            next_volley += 0.75;
        }
        net.advance(t);
        let measuring = t > run.warm;
        if (t - run.warm).abs() < 0.5 / tick_rate {
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
                .filter(|b| b.motion_type() == joule_physics::body::MotionType::Dynamic)
                .filter_map(|b| {
                    server
                        .net_id(b.id())
                        .filter(|n| n % SAMPLE_EVERY == 0)
                        .map(|n| (n, b.position()))
                })
                .collect(),
        );
        for (client, end) in &mut clients {
            pump_client(client, end, 0, t + 5.0);
        }
        if !(measuring && tick.is_multiple_of(2)) {
            continue;
        }
        samples += 1;
        // What the same view would cost without deltas, bit-packing or quantization.
        let c = &clients[0].0;
        let mut view = Vec::new();
        for b in w.bodies() {
            let Some(id) = server.net_id(b.id()) else {
                continue;
            };
            if c.bodies()
                .get(&id)
                .is_none_or(|m| m.motion == NetMotion::Static)
            {
                continue;
            }
            f.in_view += 1.0;
            if !b.is_sleeping() {
                f.awake_in_view += 1.0;
                if b.linear_velocity().length() > 0.1 {
                    f.moving_in_view += 1.0;
                }
            }
            view.push((
                id,
                codec.quantize(
                    b.position(),
                    b.rotation(),
                    b.linear_velocity(),
                    b.angular_velocity(),
                ),
            ));
        }
        let n = view.len() as f64;
        f.naive += n * (4.0 + 13.0 * 4.0);
        f.quantized += n * (4.0 + 9.0 + 7.0 + 12.0);
        let full = SnapshotState { tick, bodies: view };
        f.packed += ServerMessage::encode_snapshot(&codec, &full, None).len() as f64;
        // The error at the client's presentation time, against the server's position
        // then (between its ticks).
        let Some(pt) = c.presentation_time(t + 5.0) else {
            continue;
        };
        let k = pt * tick_rate;
        let (a, b) = (k.floor() as usize, k.ceil() as usize);
        let (Some(ha), Some(hb)) = (
            a.checked_sub(1).and_then(|a| history.get(a)),
            b.checked_sub(1).and_then(|b| history.get(b)),
        ) else {
            continue;
        };
        error_samples += 1;
        for (&id, pa) in ha {
            let Some(pb) = hb.get(&id) else {
                continue;
            };
            let truth = pa.lerp(*pb, (k - a as f64) as f32);
            let inside = truth.distance(run.point) <= run.radius;
            f.sampled_all += 1.0;
            match c.pose_at(id, pt) {
                Some(shown) => {
                    let e = Vec3::from(shown.translation).distance(truth);
                    f.shown.push(e);
                    if inside {
                        f.inside.push(e);
                    }
                }
                None => {
                    f.absent_all += 1.0;
                    if inside {
                        f.absent_inside += 1.0;
                    }
                }
            }
        }
    }
    let stats = server.stats(1).expect("client");
    let per_snapshot = f64::from(samples.max(1));
    let snapshots_per_second = tick_rate / 2.0;
    f.bytes_per_second = (stats.snapshot_bytes - bytes0) as f64 / run.seconds;
    for x in [&mut f.naive, &mut f.quantized, &mut f.packed] {
        *x = *x / per_snapshot * snapshots_per_second;
    }
    for x in [&mut f.in_view, &mut f.awake_in_view, &mut f.moving_in_view] {
        *x /= per_snapshot;
    }
    let per_error = f64::from(error_samples.max(1));
    for x in [&mut f.absent_inside, &mut f.absent_all, &mut f.sampled_all] {
        *x /= per_error;
    }
    let snap_avg = snap_time / f64::from(snap_ticks.max(1));
    let plain_avg = plain_time / f64::from(plain_ticks.max(1));
    f.cpu_per_client_us = (snap_avg - plain_avg).max(0.0) / f64::from(CLIENTS) * 1e6;
    f
}

fn report(name: &str, mut f: Figures) {
    let (in_mean, in_p99) = mean_p99(&mut f.inside);
    let (all_mean, all_p99) = mean_p99(&mut f.shown);
    println!(
        "{name}: in view {:.0} moving bodies ({:.0} awake, {:.0} faster than 0.1 m/s); {:.0} B/s per client ({:.1} kbit/s); \
         without deltas {:.0} B/s, without bit-packing {:.0} B/s, without quantization {:.0} B/s; \
         error inside the area mean {:.2} mm p99 {:.2} mm ({} samples, {:.1} of the sampled bodies inside not shown per snapshot); \
         error of all shown mean {:.2} mm p99 {:.2} mm ({:.1} of {:.1} sampled bodies not shown); server CPU per client {:.0} us per snapshot",
        f.in_view,
        f.awake_in_view,
        f.moving_in_view,
        f.bytes_per_second,
        f.bytes_per_second * 8.0 / 1000.0,
        f.packed,
        f.quantized,
        f.naive,
        in_mean * 1000.0,
        in_p99 * 1000.0,
        f.inside.len(),
        f.absent_inside,
        all_mean * 1000.0,
        all_p99 * 1000.0,
        f.absent_all,
        f.sampled_all,
        f.cpu_per_client_us
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(4.0);
    let only = args.get(2).cloned().unwrap_or_default();
    let horizon: f32 = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(NetConfig::default().dead_reckoning_horizon);
    let unlimited = ServerDesc {
        bandwidth: u32::MAX / 64,
        ..ServerDesc::default()
    };
    let budget = ServerDesc::default();
    // A circle of 16 m around the origin holds 20 of many_pyramids' 55-box pyramids
    // (1,100 boxes; 24 with a body inside it, 1,320). Volleys of heavy balls (20 times
    // a box's density) knock them over from 1.5 s before the measurement and every
    // 0.75 s during it, so the view keeps moving.
    let pyramids = |desc: &ServerDesc, volleys: bool, can_sleep: bool, warm: f64| Run {
        kind: SceneKind::ManyPyramids,
        can_sleep,
        point: Vec3::ZERO,
        radius: 16.0,
        warm,
        seconds,
        desc: desc.clone(),
        volleys,
        horizon,
    };
    // rain4k: its column is 20 m square and 30 m high; an area of interest of 6 m
    // around a point 3 m above the ground's centre, then the whole scene.
    let rain = |desc: &ServerDesc, radius: f32| Run {
        kind: SceneKind::Rain4k,
        can_sleep: true,
        point: Vec3::new(0.0, 3.0, 0.0),
        radius,
        warm: 2.0,
        seconds,
        desc: desc.clone(),
        volleys: false,
        horizon,
    };
    let runs: Vec<(&str, Run)> = vec![
        (
            "many_pyramids, r 16 m, knocked over, 256 kbit/s",
            pyramids(&budget, true, false, 6.0),
        ),
        (
            "many_pyramids, r 16 m, knocked over, no budget",
            pyramids(&unlimited, true, false, 3.0),
        ),
        (
            "many_pyramids, r 16 m, at rest, awake, 256 kbit/s",
            pyramids(&budget, false, false, 6.0),
        ),
        (
            "many_pyramids, r 16 m, asleep, 256 kbit/s",
            pyramids(&budget, false, true, 12.0),
        ),
        ("rain4k, r 6 m, 256 kbit/s", rain(&budget, 6.0)),
        ("rain4k, all in view, 256 kbit/s", rain(&budget, 1000.0)),
        ("rain4k, all in view, no budget", rain(&unlimited, 1000.0)),
    ];
    for (name, run) in runs {
        if name.contains(&only) {
            report(name, measure(&run));
        }
    }
}
