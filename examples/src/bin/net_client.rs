//! A joule client over UDP: joins the server with a connect token, mirrors the world and
//! pushes its sphere every half second.
//!
//! `net_client --server ADDR --key HEX64 --id N [--seconds 8] [--latency S --jitter S
//! --loss P] [--log FILE] [--record FILE]`
//!
//! The token is made here from the server's key because this is a demo; in a game a
//! backend holds the key and hands out tokens. With `--log`, at the end it writes the
//! newest snapshot it rebuilt as `tick net_id x y z` lines, and a `PUSHES n` line. With
//! `--record`, it writes what it presented: a recording of its mirror world, one frame
//! per snapshot the presentation reached (every body with its replicated shape, at the
//! poses shown between frames), which the viewer plays:
//! `cargo run --release -p joule-examples --example view -- FILE`.

use std::fmt::Write as _;
use std::io::{BufWriter, Write as _};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use joule_examples::net_args::{Args, parse_key};
use joule_physics::math::Vec3;
use joule_physics::net::udp::{UdpClient, connect_token};
use joule_physics::net::{Client, Codec, Conditioned, NetConfig, pump_client};
use joule_physics::recording::{RecordOptions, Recorder};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let server: SocketAddr = args
        .get("server")
        .ok_or("--server ADDR is required")?
        .parse()?;
    let key = parse_key(&args.get("key").ok_or("--key HEX64 is required")?)?;
    let id: u32 = args.num("id", 1);
    let seconds: f64 = args.num("seconds", 8.0);
    let token = connect_token(32, id, server, &key, 300)?;
    let udp = UdpClient::connect(token, SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let conditions = joule_examples::net_args::conditions(&args);
    let mut udp = Conditioned::new(udp, conditions, u64::from(id));
    let codec = Codec::new(NetConfig::default())?;
    let mut client = Client::new(codec.clone(), u64::from(id));
    let interval = codec.config().snapshot_interval as f32 / codec.config().tick_rate as f32;
    let mut recorder = match args.get("record") {
        Some(path) => Some(Recorder::new(
            BufWriter::new(std::fs::File::create(path)?),
            client.world(),
            interval,
            RecordOptions::default(),
        )?),
        None => None,
    };
    let start = Instant::now();
    let mut last = start;
    let mut pushes = 0u32;
    let mut last_push = 0.0;
    // How many bodies the mirror held at the last recorded frame.
    let mut recorded_bodies = 0;
    while start.elapsed().as_secs_f64() < seconds {
        let now = start.elapsed().as_secs_f64();
        udp.inner_mut().update(last.elapsed())?;
        last = Instant::now();
        if udp.inner_mut().is_disconnected() {
            return Err("the server refused or dropped this client".into());
        }
        if let Some(&ball) = client.owned().first()
            && now - last_push > 0.5
            && now < seconds - 2.0
        {
            let dir = if pushes.is_multiple_of(2) { 1.0 } else { -1.0 };
            client.push(ball, Vec3::new(dir * 300.0, 0.0, 0.0))?;
            pushes += 1;
            last_push = now;
        }
        let steps = client.counts().mirror_steps;
        pump_client(&mut client, &mut udp, (), now);
        if let Some(recorder) = &mut recorder
            && client.counts().mirror_steps != steps
        {
            recorder.record(client.world(), None)?;
            recorded_bodies = client.bodies().len();
        }
        udp.advance(now);
        udp.inner_mut().flush()?;
        std::thread::sleep(Duration::from_millis(1));
    }
    eprintln!(
        "client {id}: {} bodies, newest tick {}, {} pushes, playout delay {:.0} ms, counts {:?}",
        client.bodies().len(),
        client.newest_tick(),
        pushes,
        client.playout_delay() * 1000.0,
        client.counts()
    );
    if let Some(recorder) = recorder {
        recorder.finish()?.flush()?;
    }
    if let Some(path) = args.get("log") {
        let mut out = String::new();
        if let Some(state) = client.latest_state() {
            for (net_id, s) in &state.bodies {
                let p = codec.position(s);
                writeln!(out, "{} {net_id} {} {} {}", state.tick, p.x, p.y, p.z)?;
            }
        }
        writeln!(out, "PUSHES {pushes}")?;
        writeln!(out, "BODIES {}", client.bodies().len())?;
        // Bodies enter and leave the view between the last recorded frame and the end.
        writeln!(out, "RECORDED_BODIES {recorded_bodies}")?;
        std::fs::write(path, out)?;
    }
    Ok(())
}
