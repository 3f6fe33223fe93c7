//! Dead reckoning: under a budget that updates each body only every so many snapshots,
//! the client carries a body on from its newest state instead of showing it where that
//! state left it.

use std::collections::BTreeMap;

use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::net::{
    Client, Codec, LinkConditions, NetConfig, Server, ServerDesc, SimNetwork, pump_client,
    pump_server,
};
use joule_physics::shape::Shape;
use joule_physics::world::WorldDesc;

use crate::common;

fn p(mut v: Vec<f32>, q: f64) -> f32 {
    v.sort_by(f32::total_cmp);
    v[((v.len() - 1) as f64 * q) as usize]
}

/// The shown error of every body with a sent state, at every client frame from 2 s to
/// 6 s, with dead reckoning up to `horizon` seconds (0: off).
fn flight_errors(horizon: f32) -> Vec<f32> {
    // 40 balls thrown up at 20 m/s from 100 m, 2 m apart, no ground and no contacts:
    // each is a projectile for the whole run (the lowest point, 8 s after the throw,
    // is 100 + 20 t - 4.9 t² = -57 m, inside the position range).
    let gravity = Vec3::new(0.0, -9.81, 0.0);
    let mut world = common::world_with(
        WorldDesc {
            gravity,
            ..WorldDesc::default()
        },
        1,
    );
    let ball = Shape::sphere(0.25).unwrap();
    let mut bodies = Vec::new();
    for i in 0..40 {
        let desc = BodyDesc {
            linear_velocity: Vec3::new(0.0, 20.0, 1.0 + 0.05 * i as f32),
            ..BodyDesc::dynamic(ball.clone(), Vec3::new(2.0 * i as f32, 100.0, 0.0))
        };
        bodies.push(world.create_body(&desc).unwrap());
    }
    let config = NetConfig {
        gravity,
        dead_reckoning_horizon: horizon,
        ..NetConfig::default()
    };
    let codec = Codec::new(config).unwrap();
    // 2.4 kB/s: a few of the 40 bodies per snapshot.
    let desc = ServerDesc {
        bandwidth: 2400,
        ..ServerDesc::default()
    };
    let mut server = Server::new(world, codec.clone(), desc);
    server
        .add_client(1, Vec3::new(40.0, 100.0, 0.0), 1000.0)
        .unwrap();
    let net = SimNetwork::new(LinkConditions::ISSUE_32, 7);
    let (mut server_end, mut client_end) = (net.endpoint(0), net.endpoint(1));
    let mut client = Client::new(codec, 5);
    let net_ids: Vec<u32> = bodies.iter().map(|&b| server.net_id(b).unwrap()).collect();
    // The server's positions after each tick.
    let mut history: BTreeMap<u32, Vec<Vec3>> = BTreeMap::new();
    let mut shown = Vec::new();
    let mut t = 0.0f64;
    while t < 6.0 {
        t += 1.0 / 240.0;
        net.advance(t);
        pump_server(&mut server, &mut server_end, t);
        history.entry(server.tick()).or_insert_with(|| {
            bodies
                .iter()
                .map(|&b| server.world().body(b).unwrap().position())
                .collect()
        });
        pump_client(&mut client, &mut client_end, 0, t);
        let Some(pt) = client.presentation_time(t) else {
            continue;
        };
        if t < 2.0 {
            continue;
        }
        // The server's position at the presentation time, between its ticks.
        let k = pt * 60.0;
        let a = k.floor() as u32;
        let (Some(pa), Some(pb)) = (history.get(&a), history.get(&(a + 1))) else {
            continue;
        };
        let state = client.latest_state().unwrap();
        for (j, &id) in net_ids.iter().enumerate() {
            // Not yet sent any state: not shown moving yet.
            if state.get(id).is_none() {
                continue;
            }
            let truth = pa[j].lerp(pb[j], (k - f64::from(a)) as f32);
            let pose = client.pose(id, t).unwrap();
            shown.push(Vec3::from(pose.translation).distance(truth));
        }
    }
    shown
}

#[test]
fn projectiles_updated_every_few_snapshots_are_shown_where_their_flight_takes_them() {
    let shown = flight_errors(2.5);
    let still = flight_errors(0.0);
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
    let (shown_mean, shown_p99) = (mean(&shown), p(shown.clone(), 0.99));
    let (still_mean, still_p99) = (mean(&still), p(still.clone(), 0.99));
    println!(
        "{} samples; dead-reckoned: mean {:.1} mm, p99 {:.1} mm; not carried on: mean {:.0} mm, p99 {:.0} mm",
        shown.len(),
        shown_mean * 1000.0,
        shown_p99 * 1000.0,
        still_mean * 1000.0,
        still_p99 * 1000.0
    );
    assert!(shown.len() > 4_000, "{} samples", shown.len());
    // The budget leaves states old: shown where their states left them, the bodies are
    // metres off (at 20 m/s, a state a quarter of a second old is 5 m behind).
    assert!(
        still_p99 > 2.0,
        "p99 {still_p99} m without dead reckoning: the budget did not bite"
    );
    // Carried on, the extrapolation of a projectile is its flight's closed form
    // p0 + v t + g t² / 2, up to: the quantization of the velocity (half of 1 cm/s per
    // axis, times the state's age, here under a second: under 1 cm), the server's
    // 6-substep integrator falling g dt t / 12 further than the closed form (1.4 cm at
    // 1 s), and the interpolation between snapshots (g (1/30 s)² / 8 = 1.4 mm).
    assert!(shown_p99 < 0.03, "p99 {shown_p99} m");
    // The mean carries the one gap left: a body first sent blends in from the pose it
    // was spawned at on the client (here 20 m below) over one snapshot interval.
    assert!(
        shown_mean * 10.0 < still_mean,
        "mean {shown_mean} m, without {still_mean} m"
    );
}
