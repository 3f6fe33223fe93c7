//! What a client costs now that its mirror is a real `World` shown through a
//! `Presentation` (issue 32, part A). The server's datagrams to one client over 3 s of
//! many_pyramids (881 boxes settling, no bandwidth budget: every change is sent) are
//! recorded once; each iteration replays them into a fresh client at their times.
//! `receive_only` decodes them and builds the mirror's bodies (spawns, shapes) but never
//! presents; `receive_and_present` also calls `update` every 1/240 s as a game would,
//! which steps the mirror to each snapshot the presentation time passes and records it.
//! The difference is the mirror's stepping and presentation.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::math::Vec3;
use joule_physics::net::{Channel, Client, Codec, NetConfig, Server, ServerDesc};
use joule_physics::world::{World, WorldDesc};

const SECONDS: f64 = 3.0;
const FRAME: f64 = 1.0 / 240.0;

/// The datagrams the server sent client 1, by frame: `(frame, channel, bytes)`.
fn stream(codec: &Codec) -> Vec<(u32, Channel, Vec<u8>)> {
    let kind = SceneKind::ManyPyramids;
    let mut world = World::new(
        WorldDesc {
            gravity: kind.gravity(),
            ..WorldDesc::default()
        },
        JobSystem::new(0).unwrap(),
    );
    scenes::build(kind, &mut world).unwrap();
    let desc = ServerDesc {
        bandwidth: 100_000_000,
        ..ServerDesc::default()
    };
    let mut server = Server::new(world, codec.clone(), desc);
    server.add_client(1, Vec3::ZERO, 10_000.0).unwrap();
    let mut client = Client::new(codec.clone(), 5);
    let mut out = Vec::new();
    for frame in 1..=(SECONDS / FRAME) as u32 {
        let t = f64::from(frame) * FRAME;
        server.advance(t);
        for (_, channel, bytes) in server.drain_outgoing() {
            client.receive(channel, &bytes, t);
            out.push((frame, channel, bytes));
        }
        for (channel, bytes) in client.update(t) {
            server.receive(1, channel, &bytes, t);
        }
    }
    assert!(
        client.bodies().len() > 800,
        "{} bodies",
        client.bodies().len()
    );
    out
}

fn replay(codec: &Codec, stream: &[(u32, Channel, Vec<u8>)], present: bool) -> Client {
    let mut client = Client::new(codec.clone(), 5);
    let mut next = 0;
    for frame in 1..=(SECONDS / FRAME) as u32 {
        let t = f64::from(frame) * FRAME;
        while let Some((f, channel, bytes)) = stream.get(next)
            && *f == frame
        {
            client.receive(*channel, bytes, t);
            next += 1;
        }
        if present {
            client.update(t);
        }
    }
    client
}

fn net_bench(c: &mut Criterion) {
    let codec = Codec::new(NetConfig::default()).unwrap();
    let stream = stream(&codec);
    let check = replay(&codec, &stream, true);
    println!(
        "net/client_many_pyramids: {} datagrams, {} snapshots, {} mirror steps, {} bodies",
        stream.len(),
        check.counts().snapshots,
        check.counts().mirror_steps,
        check.world().body_count()
    );
    let mut g = c.benchmark_group("net/client_many_pyramids_3s");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_millis(500));
    for (name, present) in [("receive_only", false), ("receive_and_present", true)] {
        g.bench_function(name, |b| b.iter(|| replay(&codec, &stream, present)));
    }
    g.finish();
}

criterion_group!(benches, net_bench);
criterion_main!(benches);
