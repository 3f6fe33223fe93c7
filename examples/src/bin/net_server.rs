//! A joule server over UDP (renet + netcode): steps a standard scene at 60 Hz with
//! spheres raining in, streams it to the clients that join with a connect token, gives
//! each a sphere to push with its inputs.
//!
//! `net_server --key HEX64 [--port 0] [--scene pyramid_big] [--rain 400] [--seconds 10]
//! [--bandwidth 32000] [--latency S --jitter S --loss P] [--log FILE]`
//!
//! It prints `LISTEN <addr>` once bound. With `--log`, it writes every body's position
//! at every snapshot tick of its last three seconds as `tick net_id x y z` lines, and
//! `STATS client actions_applied invalid flooded` lines at the end, for the process test.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use joule_examples::net_args::{Args, parse_key};
use joule_examples::scenes::{self, SceneKind, SplitMix64};
use joule_jobs::JobSystem;
use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::net::udp::{UdpEvent, UdpServer};
use joule_physics::net::{Codec, Conditioned, NetConfig, Server, ServerDesc, pump_server};
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let key = parse_key(&args.get("key").ok_or("--key HEX64 is required")?)?;
    let port: u16 = args.num("port", 0);
    let scene = args.get("scene").unwrap_or_else(|| "pyramid_big".into());
    let kind = SceneKind::from_name(&scene).ok_or("--scene: expected a standard scene name")?;
    let rain: u32 = args.num("rain", 400);
    let seconds: f64 = args.num("seconds", 10.0);
    let bandwidth: u32 = args.num("bandwidth", 32_000);
    let log = args.get("log");
    let conditions = joule_examples::net_args::conditions(&args);

    let desc = scenes::describe(kind);
    let mut world = World::new(
        WorldDesc {
            gravity: desc.gravity,
            ..WorldDesc::default()
        },
        JobSystem::new(1)?,
    );
    scenes::build_desc(&desc, &mut world)?;
    let codec = Codec::new(NetConfig::default())?;
    let mut server = Server::new(
        world,
        codec.clone(),
        ServerDesc {
            bandwidth,
            ..ServerDesc::default()
        },
    );
    let udp = UdpServer::bind(SocketAddr::from(([127, 0, 0, 1], port)), 32, key, 8)?;
    println!("LISTEN {}", udp.addr());
    // What the server sends goes through the simulated conditions (the clients
    // condition what they send).
    let mut udp = Conditioned::new(udp, conditions, 0x5e17);

    let start = Instant::now();
    let mut last = start;
    let mut rng = SplitMix64::new(0x5eed_0032);
    let mut rained = 0;
    let mut out = String::new();
    let mut logged_tick = 0;
    loop {
        let now = start.elapsed().as_secs_f64();
        if now > seconds {
            break;
        }
        udp.inner_mut().update(last.elapsed())?;
        last = Instant::now();
        for event in udp.inner_mut().events() {
            match event {
                UdpEvent::Connected(id) => {
                    // Each client's own sphere, beside the scene.
                    let x = -12.0 + 6.0 * id as f32;
                    let ball = server.world_mut().create_body(&BodyDesc::dynamic(
                        Shape::sphere(0.5)?,
                        Vec3::new(x, 0.5, 30.0),
                    ))?;
                    server.add_client(id, Vec3::ZERO, 1000.0)?;
                    server.grant(id, ball)?;
                    eprintln!("client {id} joined");
                }
                UdpEvent::Disconnected(id) => server.remove_client(id),
            }
        }
        // rain4k-like traffic: a sphere every 20 ms while the rain lasts.
        while rained < rain && f64::from(rained) * 0.02 < now {
            let p = Vec3::new(rng.range(-10.0, 10.0), 20.0, rng.range(-10.0, 10.0) + 15.0);
            server
                .world_mut()
                .create_body(&BodyDesc::dynamic(Shape::sphere(0.3)?, p))?;
            rained += 1;
        }
        // Bodies that fell off the ground leave the game (and every client's view).
        let fallen: Vec<_> = server
            .world()
            .bodies()
            .filter(|b| b.position().y < -50.0)
            .map(|b| b.id())
            .collect();
        for id in fallen {
            server.world_mut().remove_body(id)?;
        }
        let tick_before = server.tick();
        pump_server(&mut server, &mut udp, now);
        udp.advance(now);
        udp.inner_mut().flush();
        if log.is_some() && now > seconds - 3.0 {
            for tick in tick_before + 1..=server.tick() {
                if tick.is_multiple_of(codec.config().snapshot_interval)
                    && tick > logged_tick
                    && tick == server.tick()
                {
                    logged_tick = tick;
                    for body in server.world().bodies() {
                        if let Some(id) = server.net_id(body.id()) {
                            let p = body.position();
                            writeln!(out, "{tick} {id} {} {} {}", p.x, p.y, p.z)?;
                        }
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if let Some(path) = log {
        for id in 1..=8 {
            if let Some(s) = server.stats(id) {
                writeln!(
                    out,
                    "STATS {id} {} {} {}",
                    s.actions_applied, s.invalid, s.flooded
                )?;
            }
        }
        std::fs::write(path, out)?;
    }
    Ok(())
}
