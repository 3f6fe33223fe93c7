//! The snapshot budget under pressure: the server sends what its client shows most wrong,
//! nearest first; a body left out for long rises until it is sent; the stream keeps to
//! the budget.

use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::net::{
    Client, Codec, LinkConditions, NetConfig, Server, ServerDesc, SimNetwork, pump_client,
    pump_server,
};
use joule_physics::shape::Shape;
use joule_physics::world::WorldDesc;

use crate::common;

#[test]
fn a_tight_budget_goes_to_the_nearest_and_most_changed_and_starves_no_body() {
    // 120 spheres in a row along x, 1 m to 120 m from the client's point, drifting in
    // +z at 1 m/s without gravity or contacts: every one changes every step.
    let mut world = common::world_with(
        WorldDesc {
            gravity: Vec3::ZERO,
            ..WorldDesc::default()
        },
        1,
    );
    let ball = Shape::sphere(0.25).unwrap();
    let mut bodies = Vec::new();
    for i in 0..120 {
        let desc = BodyDesc {
            linear_velocity: Vec3::new(0.0, 0.0, 1.0),
            ..BodyDesc::dynamic(ball.clone(), Vec3::new(1.0 + i as f32, 0.0, 0.0))
        };
        bodies.push(world.create_body(&desc).unwrap());
    }
    let codec = Codec::new(NetConfig::default()).unwrap();
    // 3 kB/s: about 12 of the 120 bodies per snapshot.
    let budget = 3000;
    let desc = ServerDesc {
        bandwidth: budget,
        ..ServerDesc::default()
    };
    let mut server = Server::new(world, codec.clone(), desc);
    server.add_client(1, Vec3::ZERO, 1000.0).unwrap();
    let net = SimNetwork::new(LinkConditions::PERFECT, 3);
    let (mut server_end, mut client_end) = (net.endpoint(0), net.endpoint(1));
    let mut client = Client::new(codec, 5);
    let net_ids: Vec<u32> = bodies.iter().map(|&b| server.net_id(b).unwrap()).collect();
    // Each body's error (client's newest state against the server's, same tick), summed
    // over the samples, and its largest.
    let mut sum = vec![0.0f32; bodies.len()];
    let mut worst = vec![0.0f32; bodies.len()];
    let mut samples = 0u32;
    let mut last_sampled = 0;
    let (mut t, mut bytes_at_2s) = (0.0f64, 0);
    while t < 12.0 {
        t += 1.0 / 240.0;
        net.advance(t);
        pump_server(&mut server, &mut server_end, t);
        pump_client(&mut client, &mut client_end, 0, t);
        if bytes_at_2s == 0 && t >= 2.0 {
            bytes_at_2s = server.stats(1).unwrap().snapshot_bytes;
        }
        // At each snapshot the server sends, once the client has the newest: what the
        // client holds for each body against where the body is now.
        if t >= 2.0 && client.newest_tick() == server.tick() && server.tick() != last_sampled {
            last_sampled = server.tick();
            samples += 1;
            let state = client.latest_state().unwrap();
            for (k, &id) in net_ids.iter().enumerate() {
                let held = state.get(id).map(|s| server.codec().position(s));
                let truth = server.world().body(bodies[k]).unwrap().position();
                let e = held.map_or(f32::INFINITY, |p| p.distance(truth));
                sum[k] += e;
                worst[k] = worst[k].max(e);
            }
        }
    }
    assert!(samples > 100, "{samples} samples");
    let mean = |r: std::ops::Range<usize>| {
        r.clone().map(|k| sum[k]).sum::<f32>() / (f64::from(samples) * r.len() as f64) as f32
    };
    let (near, middle, far) = (mean(0..20), mean(50..70), mean(100..120));
    let rate = (server.stats(1).unwrap().snapshot_bytes - bytes_at_2s) as f64 / 10.0;
    let starved = worst.iter().copied().fold(0.0f32, f32::max);
    println!(
        "budget {budget} B/s: sent {rate:.0} B/s; mean error near {:.0} mm, middle {:.0} mm, far {:.0} mm; worst {:.0} mm",
        near * 1000.0,
        middle * 1000.0,
        far * 1000.0,
        starved * 1000.0
    );
    // Nearest first: the client's copy of a near body is fresher than of a far one.
    assert!(near < middle && middle < far, "{near} {middle} {far}");
    assert!(near * 3.0 < far, "near {near}, far {far}");
    // None starved: a far body left out rises with its error and its staleness, so
    // even the farthest is sent within a few seconds (at 1 m/s its error is the
    // seconds since the client's copy was taken).
    assert!(starved < 2.0, "a body went {starved} m stale");
    // The stream keeps to the budget on average (within 2 %).
    assert!(rate <= f64::from(budget) * 1.02, "{rate} B/s");
    assert!(
        rate >= f64::from(budget) * 0.8,
        "{rate} B/s: the budget was not used"
    );
}
